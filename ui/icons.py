"""The app icon in Qt: PNG renderings of the SVG source at any size (for installing into
the hicolor theme) and a :class:`QIcon` for windows and the tray."""

from __future__ import annotations

from PySide6.QtCore import QBuffer, QByteArray, QIODevice
from PySide6.QtGui import QIcon, QImage, QImageWriter, QPainter, QPixmap
from PySide6.QtSvg import QSvgRenderer

from openclaw_desktop.integration.icon import HICOLOR_SIZES, ICON_SVG

__all__ = ["app_icon", "render_png"]


def _image(svg: str, size: int) -> QImage:
    if not 1 <= size <= 4096:
        raise ValueError(f"icon size out of range: {size}")
    renderer = QSvgRenderer(QByteArray(svg.encode("utf-8")))
    if not renderer.isValid():
        raise ValueError("the icon is not a valid SVG document")
    image = QImage(size, size, QImage.Format.Format_ARGB32_Premultiplied)
    image.fill(0)
    painter = QPainter(image)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    renderer.render(painter)
    painter.end()
    return image


def render_png(size: int, svg: str = ICON_SVG) -> bytes:
    """The icon as a ``size`` x ``size`` PNG with a transparent background.

    Needs no QApplication (it paints into a QImage).
    """
    buffer = QBuffer()
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    writer = QImageWriter(buffer, QByteArray(b"png"))
    if not writer.write(_image(svg, size)):
        raise ValueError(f"could not encode a {size} px PNG: {writer.errorString()}")
    return bytes(buffer.data().data())


def app_icon() -> QIcon:
    """The app icon at every hicolor size (needs a QGuiApplication, as any QPixmap does)."""
    icon = QIcon()
    for size in HICOLOR_SIZES:
        icon.addPixmap(QPixmap.fromImage(_image(ICON_SVG, size)))
    return icon
