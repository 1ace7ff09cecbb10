"""Facts about the benchmark itself: its papers and its agents (``paper:<arxiv id>`` and
``benchmark`` streams). Several sources may describe one paper; each says where it came from."""

from __future__ import annotations

from typing import Annotated

from .audit import BarKind
from .base import BlobRef, Doc, Event, NonNegFloat, Tier


class PaperRegistered(Event):
    """A source described one of the benchmark's papers and its pinned target."""

    paper_id: Annotated[str, Doc("arXiv id (the dataset row's custom_id).")]
    source: Annotated[
        str, Doc("Where the description came from, e.g. 'eval_100.jsonl' or 'runs/index.json'.")
    ]
    split: Annotated[str | None, Doc("Dataset split: 'eval' or 'dev'.")] = None
    tier: Annotated[Tier | None, Doc("Release tier.")] = None
    band: Annotated[str | None, Doc("Compute band '0-8', '8-32' or '32-96'.")] = None
    kind: Annotated[str, Doc("Paper kind, e.g. 'empirical'.")] = ""
    claim: Annotated[str, Doc("The central claim.")] = ""
    target: Annotated[str, Doc("The pinned target as one line of text.")] = ""
    target_metric: Annotated[str, Doc("Metric of the pinned target.")] = ""
    target_value: Annotated[str, Doc("Value of the pinned target, as written.")] = ""
    target_scope: Annotated[str, Doc("Scope of the pinned target.")] = ""
    match_bar_kind: Annotated[
        BarKind | None, Doc("How the target is matched; None when the source does not say.")
    ] = None
    predicted_h100: Annotated[NonNegFloat | None, Doc("Predicted H100-hours.")] = None
    paper_url: Annotated[str, Doc("Paper or project URL.")] = ""
    code_url: Annotated[str, Doc("Released code URL.")] = ""
    gist: Annotated[str, Doc("Short description of the method.")] = ""
    record: Annotated[
        BlobRef | None,
        Doc("The source record verbatim (every field, including those withheld from agents)."),
    ] = None


class AgentRegistered(Event):
    """An agent of the benchmark: its short key and the model it serves."""

    key: Annotated[str, Doc("Short key, e.g. 'dsv4'.")]
    name: Annotated[str, Doc("Display name, e.g. 'DeepSeek-V4'.")] = ""
    model: Annotated[str, Doc("Served model id, e.g. 'deepseek-ai/DeepSeek-V4-Flash-0731'.")] = ""
    source: Annotated[str, Doc("Where this came from.")] = ""
