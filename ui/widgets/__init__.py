"""Widgets of the desktop window."""
