"""evidence/note.py: C2SP signed notes, verifier keys, checkpoints and cosignatures, checked
against the specs' own examples and the independent verifier."""

from __future__ import annotations

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from ways_sensors.evidence import note

from . import independent as ind
from .witness_server import Witness

# c2sp.org/signed-note's example verifier key and note
SPEC_VKEY = "example.com/foo+530d903a+AekyeRrm56hApGFkyQR4ZCbV54Id2LKaANYcrnKv3U2k"
SPEC_NOTE = (
    "This is an example message.\n\n"
    "\u2014 example.com/foo Uw2QOkn8srV1yJGh2VYRlL1Tnagv1YEq6TfXppzi2ONncAlTgK7Ztg1ERYNZXsYjO"
    "BH3mFXmRKuwHjG1Yu72IneyaQM=\n"
)


def test_the_spec_example_note_verifies_under_the_spec_example_key():
    v = note.parse_vkey(SPEC_VKEY)
    assert v.vkey == SPEC_VKEY
    assert note.verify(note.parse(SPEC_NOTE), [v]) == [v]
    tampered = SPEC_NOTE.replace("example message", "exemplary message")
    with pytest.raises(note.NoteError, match="does not verify"):
        note.verify(note.parse(tampered), [v])


def test_a_signed_checkpoint_is_what_the_independent_verifier_reads():
    signer = note.Signer(Ed25519PrivateKey.generate())
    cp = note.checkpoint("ways.sensors/abc/s/r/sid", 3, b"\x07" * 32)
    signed = note.Note(cp.text, [signer.sign(cp.text, cp.origin)])
    text = str(signed)
    assert text.splitlines()[:3] == [
        "ways.sensors/abc/s/r/sid",
        "3",
        "BwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwc=",
    ]
    assert text.splitlines()[3] == "" and text.splitlines()[4].startswith("\u2014 ways.sensors/abc")
    assert ind.checkpoint_body(text) == ("ways.sensors/abc/s/r/sid", 3, b"\x07" * 32, [])
    assert ind.signed_by(text, cp.origin, signer.public)
    assert not ind.signed_by(text, "another/name", signer.public)
    v = signer.verifier(cp.origin)
    name, kid, kind, public = ind.parse_vkey(v.vkey)
    assert (name, kid, kind, public) == (
        cp.origin,
        ind.ed25519_key_id(name, public),
        1,
        signer.public,
    )
    assert note.parse_checkpoint(note.parse(text).text) == cp


def test_unknown_keys_are_ignored_and_a_note_nobody_known_signed_is_refused():
    a, b = (note.Signer(Ed25519PrivateKey.generate()) for _ in range(2))
    text = "x\n"
    signed = note.Note(text, [a.sign(text, "a"), b.sign(text, "b")])
    parsed = note.parse(str(signed))
    assert note.verify(parsed, [b.verifier("b")]) == [b.verifier("b")]
    with pytest.raises(note.NoteError, match="no known key"):
        note.verify(parsed, [b.verifier("c")])


@pytest.mark.parametrize(
    "bad",
    [
        "no blank line\n\u2014 a AAAAAAA=\n",
        "text\n\nnot a signature\n",
        "text\n\n\u2014 a not-base64!\n",
        "te\x01xt\n\n\u2014 a AAAAAAA=\n",
        "text\n\n\u2014 a AAAAAAA=",
    ],
)
def test_malformed_notes_are_refused(bad):
    with pytest.raises(note.NoteError):
        note.parse(bad)


def test_a_witness_cosignature_v1_verifies_and_binds_the_checkpoint_text():
    w = Witness("witness.test/w1", lambda origin: None)
    v = note.parse_vkey(w.vkey)
    assert v.kind == note.COSIGNATURE_V1
    text = note.checkpoint("o/1", 5, b"\x01" * 32).text
    sig = note.signature_line(w.cosign(text).rstrip("\n"))
    ts = note.cosignature_time(v, sig, text)
    assert ts is not None and ts > 1_600_000_000
    assert note.cosignature_time(v, sig, note.checkpoint("o/1", 6, b"\x01" * 32).text) is None


def test_a_checkpoints_file_splits_into_its_notes():
    signer = note.Signer(Ed25519PrivateKey.generate())
    notes = []
    for n in (1, 2):
        cp = note.checkpoint("o", n, bytes([n]) * 32)
        notes.append(str(note.Note(cp.text, [signer.sign(cp.text, "o")])))
    assert note.split_notes("\n".join(notes)) == notes
    assert note.split_notes("\n\n" + notes[0] + "\n\n\n" + notes[1]) == notes
    w = Witness("witness.test/w1", lambda origin: None)  # a note with two signatures
    two = notes[0] + w.cosign(note.parse(notes[0]).text)
    assert note.split_notes(two + "\n" + notes[1]) == [two, notes[1]]
