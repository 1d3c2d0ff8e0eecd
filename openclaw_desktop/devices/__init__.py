"""The only modules that touch hardware and desktop-service libraries: camera (cv2),
audio (sounddevice), notifications (desktop-notifier / D-Bus) and screen capture (mss).

Everything here is plain functions and small classes that return data or raise
:class:`DeviceError`; the node handlers turn those into wire results.
"""

from openclaw_desktop.devices.errors import DeviceError

__all__ = ["DeviceError"]
