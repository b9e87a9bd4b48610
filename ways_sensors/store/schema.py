"""The store's tables, and what one delivered record becomes as a row.

    records      one row per record a store rule delivered: the filter columns below,
                 `text` (what search reads) and `record` (the record's JSON, as
                 delivered). UNIQUE (sensor, rule, session_id, rule_seq): a batch
                 delivered again after a crash (at-least-once) is stored once.
    records_fts  FTS5 over records.text with the `trigram` tokenizer (substrings of
                 three characters or more, case folded), kept in step by the writer
                 (INSERT_FTS: a row and its index entry in one transaction) and by a
                 delete trigger; it indexes each text with PAD after it (its content
                 is the view `records_indexed`), so every character of a text begins
                 a trigram: a query of one or two characters finds its records among
                 the trigrams it begins (store/candidates.py)
    sessions     one row per session, updated with each new record: its span, counts,
                 first prompt, model, cost (the sum of its replies') and how it ended
    checkpoints  the signed checkpoints a chained rule delivers after its records
    meta         `schema` (VERSION; the embedded store's file: store/sqlite.py's
                 FILE_VERSION): a database of another version is refused

`text` is every distinct string of the record's `data` but those under UNSEARCHED's
keys (the client's bookkeeping, a call's id, the tool's name), depth first, one per line
(prompts, replies, commands, paths, tool output), at most TEXT_MAX characters: the
search's bound on what one record costs to index. The index keeps no positions
(`detail=none`: the trigram index costs a record about half as much to write); a query
asks for every trigram of its text and the match is then checked on the text itself
(store/query.py). Rows are only ever inserted and, by retention,
deleted with their session.
"""

from __future__ import annotations

from typing import Any

VERSION = 4
PAD = "\n\n"  # after each indexed text (records_indexed, INSERT_FTS, records_ad): char(10, 10)
TEXT_MAX = 1 << 20
# data's fields search does not read: the client's bookkeeping (`extra`: its transcript
# path, working folder, modes, the same in every record), a call's id, and the tool's
# name and kind, which are filter columns; each would cost every record its trigrams
UNSEARCHED = frozenset({"extra", "tool_use_id", "tool_name", "tool_kind"})

DDL = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS records (
  id INTEGER PRIMARY KEY,
  sensor TEXT NOT NULL, rule TEXT NOT NULL, session_id TEXT NOT NULL,
  rule_seq INTEGER, seq INTEGER, ts TEXT NOT NULL, section TEXT NOT NULL,
  agent TEXT NOT NULL, agent_id TEXT, agent_type TEXT, project TEXT, user_id TEXT,
  tool TEXT, tool_kind TEXT, tool_use_id TEXT, model TEXT, cost REAL, outcome TEXT,
  imported INTEGER NOT NULL DEFAULT 0, text TEXT NOT NULL, record TEXT NOT NULL,
  UNIQUE (sensor, rule, session_id, rule_seq)
);
CREATE INDEX IF NOT EXISTS records_session ON records (session_id, ts, seq);
CREATE VIEW IF NOT EXISTS records_indexed AS
  SELECT id, text || char(10, 10) AS text FROM records;
CREATE VIRTUAL TABLE IF NOT EXISTS records_fts USING fts5 (
  text, content='records_indexed', content_rowid='id', tokenize='trigram', detail='none'
);
CREATE TRIGGER IF NOT EXISTS records_ad AFTER DELETE ON records BEGIN
  INSERT INTO records_fts (records_fts, rowid, text)
    VALUES ('delete', old.id, old.text || char(10, 10));
END;
CREATE TABLE IF NOT EXISTS sessions (
  session_id TEXT PRIMARY KEY, agent TEXT NOT NULL, project TEXT,
  first_ts TEXT NOT NULL, last_ts TEXT NOT NULL, records INTEGER NOT NULL,
  prompts INTEGER NOT NULL, tools INTEGER NOT NULL, model TEXT, cost REAL,
  outcome TEXT, first_prompt TEXT, imported INTEGER NOT NULL DEFAULT 0, user_id TEXT
);
CREATE INDEX IF NOT EXISTS sessions_last ON sessions (last_ts);
CREATE TABLE IF NOT EXISTS checkpoints (
  sensor TEXT NOT NULL, rule TEXT NOT NULL, session_id TEXT NOT NULL,
  last_rule_seq INTEGER NOT NULL, size INTEGER NOT NULL, ts TEXT, record TEXT NOT NULL,
  PRIMARY KEY (sensor, rule, session_id, last_rule_seq, size)
);
"""

# the columns of `records` a row fills, in INSERT order
COLUMNS = (
    "sensor",
    "rule",
    "session_id",
    "rule_seq",
    "seq",
    "ts",
    "section",
    "agent",
    "agent_id",
    "agent_type",
    "project",
    "user_id",
    "tool",
    "tool_kind",
    "tool_use_id",
    "model",
    "cost",
    "outcome",
    "imported",
    "text",
    "record",
)
# a new row's index entry, made by the writer: the same insert made by a trigger costs
# several times as much (bench/RESULTS.md, the drain into the store)
INSERT_FTS = "INSERT INTO records_fts (rowid, text) VALUES (?, ? || char(10, 10))"
INSERT = (
    f"INSERT OR IGNORE INTO records ({', '.join(COLUMNS)}) VALUES ({', '.join('?' * len(COLUMNS))})"
)
# a new record's share of its session's row (only when the record row was new)
UPSERT_SESSION = """
INSERT INTO sessions (session_id, agent, project, first_ts, last_ts, records, prompts,
  tools, model, cost, outcome, first_prompt, imported, user_id)
VALUES (?, ?, ?, ?, ?, 1, ?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (session_id) DO UPDATE SET
  first_ts = min(first_ts, excluded.first_ts),
  last_ts = max(last_ts, excluded.last_ts),
  records = records + 1,
  prompts = prompts + excluded.prompts,
  tools = tools + excluded.tools,
  model = coalesce(excluded.model, model),
  cost = CASE WHEN excluded.cost IS NULL THEN cost ELSE coalesce(cost, 0) + excluded.cost END,
  outcome = coalesce(excluded.outcome, outcome),
  first_prompt = CASE WHEN first_prompt IS NULL OR excluded.first_ts < first_ts
    THEN coalesce(excluded.first_prompt, first_prompt) ELSE first_prompt END,
  imported = min(imported, excluded.imported),
  project = coalesce(project, excluded.project),
  user_id = coalesce(user_id, excluded.user_id)
"""
# keyed by the tree size it signs too: the tree's end (sealer.py: an end leaf after the
# last record) signs one more leaf at the same last_rule_seq, and the proof needs both
INSERT_CHECKPOINT = (
    "INSERT OR IGNORE INTO checkpoints (sensor, rule, session_id, last_rule_seq, size, ts, "
    "record) VALUES (?, ?, ?, ?, ?, ?, ?)"
)
PROMPT_MAX = 200  # characters of a session's first prompt kept on its row


def strings(value: Any, out: list[str]) -> list[str]:
    """Every string in `value`, depth first (keys' values in their order)."""
    if isinstance(value, str):
        if value:
            out.append(value)
    elif isinstance(value, dict):
        for v in value.values():
            strings(v, out)
    elif isinstance(value, list):
        for v in value:
            strings(v, out)
    return out


def text_of(data: Any) -> str:
    """What search reads of a record: its data's distinct strings outside UNSEARCHED,
    one a line in the order they first appear, bounded."""
    if isinstance(data, dict):
        data = {k: v for k, v in data.items() if k not in UNSEARCHED}
    return "\n".join(dict.fromkeys(strings(data, [])))[:TEXT_MAX]


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _cost(data: dict[str, Any]) -> float | None:
    """A reply's price (data.usage.cost.amount); None for anything else."""
    usage = data.get("usage")
    cost = usage.get("cost") if isinstance(usage, dict) else None
    amount = cost.get("amount") if isinstance(cost, dict) else None
    return (
        float(amount) if isinstance(amount, (int, float)) and not isinstance(amount, bool) else None
    )


def outcome_of(section: str, data: dict[str, Any]) -> str | None:
    """How a record ended: a tool result's status, a session's end reason, a
    permission's decision, `error` for a failed turn."""
    if section == "tool_result":
        return _str(data.get("status"))
    if section == "session_end":
        return _str(data.get("reason"))
    if section == "permission":
        return _str(data.get("decision"))
    if section == "error":
        return "error"
    return None


def user_of(record: dict[str, Any]) -> str | None:
    """Who made the record: its identity's user id (fleet/identity.py), the filter that
    tells a team's users apart in a shared store."""
    identity = record.get("identity")
    user = identity.get("user") if isinstance(identity, dict) else None
    return _str(user.get("id")) if isinstance(user, dict) else None


def row(record: dict[str, Any], line: str) -> tuple[Any, ...]:
    """The `records` row of a delivered record (COLUMNS' order)."""
    data = record.get("data")
    data = data if isinstance(data, dict) else {}
    section = str(record.get("section") or "")
    rule_seq = record.get("rule_seq")
    seq = record.get("seq")
    return (
        str(record.get("sensor") or ""),
        str(record.get("rule") or ""),
        str(record.get("session_id") or ""),
        rule_seq if isinstance(rule_seq, int) else None,
        seq if isinstance(seq, int) else None,
        str(record.get("timestamp") or ""),
        section,
        _str(record.get("agent")) or "claude-code",  # records.md: absent means Claude Code
        _str(record.get("agent_id")),
        _str(record.get("agent_type")),
        _str(record.get("project")),
        user_of(record),
        _str(data.get("tool_name")),
        _str(data.get("tool_kind")),
        _str(data.get("tool_use_id")),
        _str(data.get("model")),
        _cost(data) if section == "assistant_response" else None,
        outcome_of(section, data),
        1 if record.get("imported") is True else 0,
        text_of(data),
        line,
    )


def session_values(r: tuple[Any, ...]) -> tuple[Any, ...]:
    """A new record row's share of its session (UPSERT_SESSION's values)."""
    c = dict(zip(COLUMNS, r, strict=True))
    section = c["section"]
    prompt = None
    if section == "user_prompt":
        prompt = c["text"].split("\n", 1)[0][:PROMPT_MAX]
    return (
        c["session_id"],
        c["agent"],
        c["project"],
        c["ts"],
        c["ts"],
        1 if section == "user_prompt" else 0,
        1 if section == "tool_call" else 0,
        c["model"],
        c["cost"],
        c["outcome"] if section == "session_end" else None,
        prompt,
        c["imported"],
        c["user_id"],
    )
