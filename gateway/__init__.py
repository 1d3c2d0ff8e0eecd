"""The bundled OpenClaw gateway (asyncio + websockets server).

It imports only :mod:`openclaw_desktop.protocol` and identity verification from the core.
The server itself lands with the bundled-gateway issue; this package holds nothing yet.
"""
