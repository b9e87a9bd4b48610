"""evidence/tiles.py: the tree as tlog-tiles, read back by the package and, over a real
loopback static file server, by the client written from the spec (tile_reader.py)."""

from __future__ import annotations

import os
import random

from ways_sensors.evidence import merkle, tiles

from . import independent as ind
from . import tile_reader


def _grow(prefix: str, root: str, entries: list[bytes], n: int) -> None:
    new = [os.urandom(random.randint(0, 40)) for _ in range(n)]
    size = tiles.append(prefix, root, len(entries), new)
    entries += new
    assert size == len(entries)
    tiles.prune(prefix, size)


def test_the_tiles_are_the_tree_and_the_spec_client_reads_them(tmp_path):
    root = str(tmp_path)
    prefix = root + "/log"
    rng = random.Random(7)
    chunks = [1, 1, 3, 250, 1, 300, rng.randint(1, 40), 65_536, 2]
    entries: list[bytes] = []
    for n in chunks:
        before = len(entries)
        _grow(prefix, root, entries, n)
        if before:  # every proof from the tiles is the in-memory tree's
            want = merkle.Tree(entries)
            log = tiles.Tiles(prefix, len(entries))
            assert log.root() == want.root()
            old = rng.randint(1, before)
            assert log.consistency_proof(old, len(entries)) == want.consistency_proof(
                old, len(entries)
            )
            i = rng.randrange(len(entries))
            assert log.inclusion_proof(i, len(entries)) == want.inclusion_proof(i, len(entries))
            assert list(log.entries(before)) == entries[before:]
    size = len(entries)  # 66,094: level 0, 1 and 2 tiles, partial at each
    assert (tmp_path / "log/tile/2/000.p/1").exists()
    assert not (tmp_path / "log/tile/0/000.p").exists()  # pruned once its full tile came
    with tile_reader.serving(prefix) as base:
        assert tile_reader.leaf_hashes(base, size) == [ind.sha256(b"\x00" + e) for e in entries]
        assert tile_reader.entries(base, size) == entries
        assert tile_reader.mth_of_hashes(tile_reader.leaf_hashes(base, size)) == ind.mth(entries)


def test_an_append_killed_before_its_commit_is_written_again_the_same_way(tmp_path):
    """The caller commits the size after the tiles: tiles of a size never committed are
    overwritten by the next append from the committed size, and the tree is right."""
    root = str(tmp_path)
    prefix = root + "/log"
    first = [b"a", b"b", b"c"]
    tiles.append(prefix, root, 0, first)
    tiles.append(prefix, root, 3, [b"lost"])  # never committed: size stays 3
    tiles.append(prefix, root, 3, [b"d", b"e"])
    log = tiles.Tiles(prefix, 5)
    assert log.root() == ind.mth([*first, b"d", b"e"])
    assert list(log.entries()) == [*first, b"d", b"e"]
    assert oct(os.stat(prefix + "/tile/0/000.p/5").st_mode & 0o777) == "0o600"
    assert oct(os.stat(prefix + "/tile/0").st_mode & 0o777) == "0o700"


def test_partial_tiles_of_sizes_no_checkpoint_signed_are_dropped(tmp_path):
    """Kept, they grew to 255 partial bundles per full one (a bundle's square); the
    partials of a checkpointed size stay until their full tile comes."""
    root = str(tmp_path)
    prefix = root + "/log"
    entries: list[bytes] = []
    signed = 3
    for _ in range(10):
        old = len(entries)
        _grow(prefix, root, entries, 1)
        if old != signed:
            tiles.drop(prefix, old, len(entries))
    partials = sorted(p.name for p in (tmp_path / "log/tile/entries/000.p").iterdir())
    assert partials == ["10", "3"]
    assert sorted(p.name for p in (tmp_path / "log/tile/0/000.p").iterdir()) == ["10", "3"]
    assert tiles.Tiles(prefix, 3).root() == ind.mth(entries[:3])  # an old checkpoint's
    assert tiles.Tiles(prefix, 10).root() == ind.mth(entries)


def test_a_machine_log_append_killed_before_its_commit_leaves_one_tree(tmp_path, monkeypatch):
    """The tiles of an append are on disk but its size was never committed (the process
    died, or the disk filled, at the commit point): the next append starts from the
    committed size, and the log is the tree of the committed entries and the new ones."""
    from ways_sensors.evidence import machinelog
    from ways_sensors.state import secure
    from ways_sensors.state.layout import Layout

    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    layout = Layout(str(tmp_path / "state"))
    machinelog.add(layout, ["one\n"])
    real = secure.replace_private

    def dies_at_the_commit(path, data, root=""):
        if path.endswith("machine-log.json"):
            raise OSError(28, "No space left on device")
        real(path, data, root)

    monkeypatch.setattr(secure, "replace_private", dies_at_the_commit)
    try:
        machinelog.add(layout, ["lost\n"])
    except OSError:
        pass
    monkeypatch.setattr(secure, "replace_private", real)
    machinelog.add(layout, ["two\n", "three\n"])
    machinelog.close(layout)
    st = machinelog.read_state(layout)
    assert st["size"] == st["signed"] == 3
    log = tiles.Tiles(machinelog.prefix(layout), 3)
    assert list(log.entries()) == [b"one\n", b"two\n", b"three\n"]
    note = (tmp_path / "state/machine-log/checkpoint").read_text()
    assert ind.checkpoint_body(note)[1:3] == (3, ind.mth([b"one\n", b"two\n", b"three\n"]))
