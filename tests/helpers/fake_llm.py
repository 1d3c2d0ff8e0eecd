"""The scripted fake model server, for the tests and benchmarks of this repository.

It moved into the package as :mod:`openclaw_desktop.sdk.testing.fake_model` so that apps
built on the SDK can test against it too; this module re-exports it unchanged, and
``python -m tests.helpers.fake_llm --port N [--log FILE]`` still works (same as
``python -m openclaw_desktop.sdk.testing.fake_model``).
"""

from __future__ import annotations

from openclaw_desktop.sdk.testing.fake_model import (
    INTERNAL_CONTEXT_MARK,
    FakeLLM,
    RecordedRequest,
    find_prompt,
    main,
)

__all__ = ["INTERNAL_CONTEXT_MARK", "FakeLLM", "RecordedRequest", "find_prompt", "main"]

if __name__ == "__main__":
    main()
