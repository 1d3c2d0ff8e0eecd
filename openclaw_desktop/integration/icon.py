"""The app's icon: a speech bubble with three claw marks, drawn from simple shapes.

:data:`ICON_SVG` is the source (``packaging/icons/openclaw-desktop.svg`` is this text, checked
by a test); PNGs at the hicolor sizes are rendered from it by ``ui.icons`` (Qt's SVG
renderer), so no binary image is kept in the repository.
"""

from __future__ import annotations

__all__ = ["HICOLOR_SIZES", "ICON_NAME", "ICON_SVG"]

ICON_NAME = "openclaw-desktop"
"""The freedesktop icon name (``Icon=`` of the desktop entry)."""

HICOLOR_SIZES = (16, 24, 32, 48, 64, 128, 256, 512)
"""The standard sizes of the hicolor theme that PNGs are installed at."""

# A rounded speech bubble (corner radius 88, tail at the bottom left) and three curved
# strokes, the claw marks, on a 512 x 512 canvas.
ICON_SVG = """\
<svg xmlns="http://www.w3.org/2000/svg" width="512" height="512" viewBox="0 0 512 512">
  <title>OpenClaw Desktop</title>
  <path fill="#d9412e" d="M120 40H392A88 88 0 0 1 480 128V320A88 88 0 0 1 392 408
                          H248L144 484V408H120A88 88 0 0 1 32 320V128A88 88 0 0 1 120 40Z"/>
  <g fill="none" stroke="#fff6ec" stroke-width="40" stroke-linecap="round">
    <path d="M148 330Q176 210 252 118"/>
    <path d="M228 350Q254 226 332 128"/>
    <path d="M308 344Q330 250 392 178"/>
  </g>
</svg>
"""
