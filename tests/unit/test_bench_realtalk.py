"""bench/data/realtalk.py's loader on a tiny conversation written here in REALTALK's shape (the
data set itself is evaluation-only and never part of this repository or its CI)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench.data import realtalk
from bench.suites.quality_realtalk import _strip, aggregate, markdown


def _msg(speaker: str, text: str, when: str, dia: str) -> dict[str, object]:
    return {"clean_text": text, "speaker": speaker, "date_time": when, "img_file": [],
            "img_url": [], "dia_id": dia}


def write_chat(directory: Path, number: int = 3) -> Path:
    chat = {
        "name": {"speaker_1": "Ana", "speaker_2": "bo"},
        "session_1": [
            _msg("Ana", "I adopted a cat called Miso", "02.01.2024, 10:00:00", "D1:1"),
            _msg("bo", "Cute! I am learning the cello", "02.01.2024, 10:05:00", "D1:2"),
            _msg("Bo", "", "02.01.2024, 10:06:00", "D1:3"),  # an image only: no turn
        ],
        "session_1_date_time": "02.01.2024, 10:00:00",
        "events_session_1": {"agent_a": [], "agent_b": []},
        "session_2": [
            _msg("BO", "My recital is on Friday", "05.01.2024, 20:00:00", "D2:1"),
            _msg("ana", "Good luck with it", "05.01.2024, 20:01:00", "D2:2"),
        ],
        "qa": [
            {"question": "What is Ana's cat called?", "answer": "Miso",
             "evidence": ["D1:1"], "category": 1},
            {"question": "When is Ana's recital?", "answer": "Friday",  # Bo said it
             "evidence": ["D2:1", "D2:1-D2:2"], "category": 2},
            {"question": "What might they talk about next?", "answer": "music",
             "evidence": ["D1:2", "D9:9"], "category": 3},
            {"question": "What did Bo cook?", "answer": "?", "evidence": ["D7:1"],
             "category": 1},
        ],
    }
    path = directory / f"Chat_{number}_Ana_Bo.json"
    path.write_text(json.dumps(chat), encoding="utf-8")
    return path


def test_a_conversation_becomes_turns_and_scorable_questions(tmp_path: Path) -> None:
    write_chat(tmp_path)
    corpus = realtalk.load(tmp_path)
    assert corpus.chats == (3,)
    # speaker case normalised; the message without text is no turn
    assert [t.speaker for t in corpus.turns] == ["Ana", "Bo", "Bo", "Ana"]
    assert [t.external_id for t in corpus.turns] == [
        "realtalk03:D1:1", "realtalk03:D1:2", "realtalk03:D2:1", "realtalk03:D2:2"]
    assert {t.session for t in corpus.turns} == {"realtalk03-s01", "realtalk03-s02"}
    assert corpus.turns[2].timestamp == "2024-01-05T20:00:00+00:00"
    assert all(t.user == "realtalk03" and t.role == "user" for t in corpus.turns)
    # unmatched evidence ids are counted and left out; a question with none left is not asked
    assert corpus.unmatched_evidence == 3 and corpus.unscorable == 1
    assert corpus.questions_in_files == 4
    assert [(q.category, q.evidence) for q in corpus.questions] == [
        ("fact", ("realtalk03:D1:1",)), ("date", ("realtalk03:D2:1",)),
        ("inference", ("realtalk03:D1:2",))]
    assert {q.asked_at for q in corpus.questions} == {"2024-01-06T20:01:00+00:00"}
    ids = [q.id for q in corpus.questions]
    assert [corpus.slices[i] for i in ids] == ["named speaker", "other speaker", "none or both"]
    assert realtalk.describe(corpus)["counts"] == {"fact": 1, "date": 1, "inference": 1}


def test_chats_are_chosen_by_number_and_missing_data_says_how_to_get_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write_chat(tmp_path, 3)
    write_chat(tmp_path, 7)
    assert realtalk.load(tmp_path, (7,)).chats == (7,)
    assert {t.user for t in realtalk.load(tmp_path).turns} == {"realtalk03", "realtalk07"}
    with pytest.raises(realtalk.DataMissing, match="no Chat_6_"):
        realtalk.load(tmp_path, (6, 7))
    monkeypatch.delenv(realtalk.ENV, raising=False)
    with pytest.raises(realtalk.DataMissing, match="--data DIR") as exc:
        realtalk.load(None)
    assert "danny911kr/REALTALK" in str(exc.value)
    with pytest.raises(realtalk.DataMissing, match="holds no Chat_"):
        realtalk.load(tmp_path / "nowhere")
    monkeypatch.setenv(realtalk.ENV, str(tmp_path))
    assert realtalk.load(None, (3,)).chats == (3,)


def test_a_malformed_file_is_a_clear_error(tmp_path: Path) -> None:
    path = write_chat(tmp_path)
    chat = json.loads(path.read_text())
    chat["session_2"][0]["date_time"] = "2024-01-05 20:00"
    path.write_text(json.dumps(chat))
    with pytest.raises(realtalk.BadData, match=r"session_2\[0\].*DD\.MM\.YYYY"):
        realtalk.load(tmp_path)
    chat["session_2"][0]["date_time"] = "05.01.2024, 20:00:00"
    chat["qa"][0]["category"] = 5
    path.write_text(json.dumps(chat))
    with pytest.raises(realtalk.BadData, match="category 5"):
        realtalk.load(tmp_path)
    path.write_text("{not json")
    with pytest.raises(realtalk.BadData, match="not readable JSON"):
        realtalk.load(tmp_path)


def test_the_report_rows_carry_ids_and_ranks_not_the_data_sets_words() -> None:
    system = {"first": 1, "all": 1, "stale": None, "verdict": "strong_match",
              "best_similarity": 0.7, "top": [["realtalk03:D1:1"]]}
    rows = [{"id": f"q{n}", "category": cat, "text": "What is Ana's cat called?",
             "answer": "Miso", "about": "Ana", "evidence": ["realtalk03:D1:1"], "stale": [],
             "systems": {"cogd": {**system, "first": n}, "bm25": system}}
            for n, cat in ((1, "fact"), (3, "date"))]
    stripped = _strip(rows)
    assert not {"text", "answer", "about"} & {k for r in stripped for k in r}
    out = aggregate(rows, ["cogd", "bm25"], {"q1": "named speaker", "q3": "other speaker"})
    assert out["summary"]["cogd"]["answerable"]["R@1"] == 0.5
    assert out["slices"]["cogd"]["categories"]["other speaker"]["R@1"] == 0.0
    assert out["compare_r1"]["answerable"]["margin_R"] == -0.5
    corpus = {"chats": [6, 7], "turns": 4, "questions_in_files": 3, "questions": 2,
              "counts": {"fact": 1, "date": 1}, "unmatched_evidence_ids": 1,
              "unscorable_questions": 1}
    data = {"machine": {"cpus": 2, "processor": "x86_64", "python": "3.11"}, "split": "heldout",
            "date": "2026-11-28", "wall_s": 1.0, "corpus": corpus,
            "import": {"inserted": 4, "seconds": 0.1}, "systems": ["cogd", "bm25"],
            "info": {"weak_match_min_score": 0.45, "strong_match_min_score": 0.51, "rrf_k": 60,
                     "reranker": "off", "ablations": {}, "seconds": {}}, **out}
    report = markdown(data)
    assert "Chat_6-7 (held out: never tuned on)" in report and "arXiv 2502.13270" in report
    assert "| cogd | 100 % / 100 % / 1.000 | 0 % / 100 % / 0.333 | 50 % / 100 % / 0.667 |" \
        in report
    assert "Miso" not in report and "cat called" not in report


def test_swapped_speakers_name_the_other_person_and_keep_the_evidence(tmp_path: Path) -> None:
    path = write_chat(tmp_path)
    chat = json.loads(path.read_text())
    chat["qa"] += [
        {"question": "Where did ANA adopt Ana's cat?", "answer": "?", "evidence": ["D1:1"],
         "category": 1},
        {"question": "What do Ana and Bo both like?", "answer": "?",  # a pair: left out
         "evidence": ["D1:1", "D1:2"], "category": 3},
    ]
    path.write_text(json.dumps(chat), encoding="utf-8")
    corpus = realtalk.load(tmp_path)
    swapped = realtalk.swap_speakers(corpus)
    # only the "named speaker" questions are asked again; "other speaker" and pairs are not
    assert [q.id for q in swapped.questions] == ["realtalk03-q001-swap", "realtalk03-q005-swap"]
    assert [q.text for q in swapped.questions] == [
        "What is Bo's cat called?", "Where did Bo adopt Bo's cat?"]
    assert [q.about for q in swapped.questions] == ["Bo", "Bo"]
    assert [q.evidence for q in swapped.questions] == [("realtalk03:D1:1",)] * 2
    assert set(swapped.slices.values()) == {realtalk.SWAPPED}
    assert swapped.turns is corpus.turns  # one import serves both
    hit = {"all": 1, "stale": None, "verdict": None, "best_similarity": None, "top": []}
    out = aggregate([{"id": q.id, "category": q.category, "evidence": list(q.evidence),
                      "stale": [], "systems": {"cogd": {**hit, "first": 2},
                                               "bm25": {**hit, "first": None}}}
                     for q in swapped.questions], ["cogd", "bm25"], swapped.slices)
    assert out["slices"]["cogd"]["categories"][realtalk.SWAPPED]["R@10"] == 1.0
    assert out["slices"]["bm25"]["categories"][realtalk.SWAPPED]["R@10"] == 0.0
