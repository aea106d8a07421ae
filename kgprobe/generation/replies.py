"""What kgprobe keeps of a provider's reply: an answer is non-empty text of bounded size; a reply without one is a
failure, not an empty answer.

A provider's reply is not trusted to be tidy. The API backends (``litellm``, the batch clients) pass every choice
through :func:`no_answer` and :func:`bound_answer` before it becomes a
:class:`~kgprobe.generation.records.Completion`:

* a choice with no text (``content: null``, an empty or blank string, no text block), one stopped by the
  provider's content filter (``finish_reason: content_filter``) and a refusal are failures: stored with their error
  (and with the tokens and cost the provider billed), never scored, and asked again by the next run;
* an answer longer than its request allowed is cut to :func:`answer_limit` bytes (``max_tokens`` times
  :data:`BYTES_PER_TOKEN`, at most :data:`MAX_ANSWER_BYTES`) and marked: its ``finish_reason`` is :data:`CUT`;
* an HTTP body is read up to :data:`MAX_REPLY_BYTES` (OpenAI-compatible endpoints: ``openai/...`` models); a longer
  one is not read further and is a failure that names the limit.

    >>> bound_answer("x" * 100, max_tokens=2)
    ('xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx', True)
    >>> no_answer(None, "stop")
    'empty reply: the provider returned no text (finish_reason stop)'
"""

from __future__ import annotations

__all__ = ["BYTES_PER_TOKEN", "CUT", "MAX_ANSWER_BYTES", "MAX_REPLY_BYTES", "answer_limit", "bound_answer",
           "no_answer"]

#: UTF-8 bytes allowed per token of ``max_tokens``: well above what any tokenizer's tokens average (about 4 bytes
#: of English, 3 of CJK), so only a provider that ignored ``max_tokens`` is cut.
BYTES_PER_TOKEN = 32
#: The most UTF-8 bytes of one answer that are kept, whatever ``max_tokens`` says (1 MiB).
MAX_ANSWER_BYTES = 1 << 20
#: The most bytes of one HTTP reply body that are read (16 MiB: ``n`` choices of long answers with their top
#: log-probabilities fit); a longer reply is a failure.
MAX_REPLY_BYTES = 16 << 20
#: The ``finish_reason`` of an answer that kgprobe cut to :func:`answer_limit`.
CUT = "cut"
# finish reasons that say the provider withheld the answer (OpenAI, Azure, Gemini through litellm; Anthropic)
_WITHHELD = frozenset({"content_filter", "refusal", "safety", "recitation", "blocklist", "prohibited_content", "spii"})
_DETAIL = 300  # characters of a refusal quoted in the error


def answer_limit(max_tokens: int | None) -> int:
    """The most UTF-8 bytes kept of an answer to a request for ``max_tokens`` tokens (None:
    :data:`MAX_ANSWER_BYTES`)."""
    if max_tokens is None or max_tokens < 1:
        return MAX_ANSWER_BYTES
    return min(MAX_ANSWER_BYTES, max_tokens * BYTES_PER_TOKEN)


def bound_answer(text: str, *, max_tokens: int | None) -> tuple[str, bool]:
    """``text`` cut to :func:`answer_limit` UTF-8 bytes (never inside a character), and whether it was cut."""
    limit = answer_limit(max_tokens)
    if len(text) <= limit // 4:  # a character is at most 4 bytes: short texts need no encoding
        return text, False
    data = text.encode("utf-8")
    if len(data) <= limit:
        return text, False
    return data[:limit].decode("utf-8", errors="ignore"), True


def no_answer(text: str | None, finish_reason: str | None, *, refusal: str | None = None) -> str | None:
    """The error of a reply that holds no answer (None when it holds one): no text or only blanks, a content
    filter's stop, or a refusal (quoted, cut to a few hundred characters)."""
    reason = str(finish_reason).lower() if finish_reason else None
    if refusal:
        return f"refused by the provider: {refusal[:_DETAIL]}"
    if reason in _WITHHELD:
        return f"withheld by the provider (finish_reason {finish_reason})"
    if text is None or not text.strip():
        return f"empty reply: the provider returned no text (finish_reason {finish_reason})"
    return None
