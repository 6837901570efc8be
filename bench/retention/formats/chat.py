"""A messaging-gateway chat: a personal assistant reached over a chat app, no tools at all.

Sessions in this format are only ``Say`` turns; an ``Act`` is a mistake in the corpus.
"""

from __future__ import annotations

from typing import Any

from bench.retention.events import Act, Ids

SYSTEM_PROMPT = (
    "You are Lumi, a personal assistant people reach through a messaging app (WhatsApp and "
    "Telegram, relayed by a gateway). Reply in the language the person writes in; if they mix "
    "languages, follow the one of their last message unless they asked otherwise. Keep replies "
    "short enough to read on a phone: a few sentences or a short list. You cannot browse, send "
    "messages to others or make bookings yourself; say so plainly and help them do it. Dates "
    "and times are in the person's time zone unless they name another."
)


class ChatRenderer:
    name = "chat"

    def system_prompt(self) -> str:
        return SYSTEM_PROMPT

    def render(self, turn: Act, ids: Ids) -> list[dict[str, Any]]:
        raise ValueError("chat sessions have no tool calls; the corpus gave this format an Act")


RENDERER = ChatRenderer()
