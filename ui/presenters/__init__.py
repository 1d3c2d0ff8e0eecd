"""Presenters: Qt objects that bind the SDK and the pure chat state to widgets."""
