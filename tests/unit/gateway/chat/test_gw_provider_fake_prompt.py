"""How the fake model server picks the prompt and notices a tool result (pure function)."""

from __future__ import annotations

from typing import Any

from tests.helpers.fake_llm import find_prompt


def test_plain_prompt_is_the_last_user_message() -> None:
    """Without tools, the last user message is the prompt and nothing is answered."""
    messages: list[dict[str, Any]] = [
        {"role": "user", "content": "a"},
        {"role": "assistant", "content": "x"},
        {"role": "user", "content": "b"},
    ]
    assert find_prompt(messages) == ("b", None)


def test_synthetic_user_message_after_tool_results_is_skipped() -> None:
    """OpenAI shape: the user message right after a tool message is not the prompt."""
    messages: list[dict[str, Any]] = [
        {"role": "user", "content": "CALLTOOL:x:{}"},
        {"role": "assistant", "content": None, "tool_calls": [{"id": "c"}]},
        {"role": "tool", "tool_call_id": "c", "content": "result"},
        {"role": "user", "content": "continue"},
    ]
    assert find_prompt(messages) == ("CALLTOOL:x:{}", "result")


def test_anthropic_tool_result_blocks_count_as_tool_messages() -> None:
    """Anthropic shape: a user message of tool_result blocks is a tool result, not a prompt."""
    messages: list[dict[str, Any]] = [
        {"role": "user", "content": [{"type": "text", "text": "CALLTOOL:x:{}"}]},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t"}]},
        {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "t",
                    "content": [{"type": "text", "text": "out"}],
                }
            ],
        },
    ]
    assert find_prompt(messages) == ("CALLTOOL:x:{}", "out")


def test_a_new_turn_after_a_tool_round_is_a_new_prompt() -> None:
    """After the model answered the tool result, the next user message is a fresh prompt."""
    messages: list[dict[str, Any]] = [
        {"role": "user", "content": "CALLTOOL:x:{}"},
        {"role": "assistant", "content": None, "tool_calls": [{"id": "c"}]},
        {"role": "tool", "tool_call_id": "c", "content": "result"},
        {"role": "assistant", "content": "done"},
        {"role": "user", "content": "CALLTOOL:y:{}"},
    ]
    assert find_prompt(messages) == ("CALLTOOL:y:{}", None)
