"""evidence/merkle.py against RFC 6962's test vectors and the independent verifier."""

from __future__ import annotations

import os

import pytest

from ways_sensors.evidence import merkle

from . import independent as ind

# certificate-transparency's reference vectors: the leaves and the tree heads at 1..8
VECTOR_LEAVES = ["", "00", "10", "2021", "3031", "40414243", "5051525354555657",
                 "606162636465666768696a6b6c6d6e6f"]  # fmt: skip
VECTOR_ROOTS = [
    "6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d",
    "fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125",
    "aeb6bcfe274b70a14fb067a5e5578264db0fa9b51af5e0ba159158f329e06e77",
    "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7",
    "4e3bbb1f7b478dcfe71fb631631519a3bca12c9aefca1612bfce4c13a86264d4",
    "76e67dadbcdf1e10e1b74ddc608abd2f98dfb16fbce75277b5232a127f2087ef",
    "ddb89be403809e325750d3d263cd78929c2942b7942a34b77e122c9594a74c8c",
    "5dc9da79a70659a9ad559cb701ded9a2ab9d823aad2f4960cfe370eff4604328",
]


def test_roots_match_the_rfc_6962_reference_vectors():
    tree = merkle.Tree(bytes.fromhex(x) for x in VECTOR_LEAVES)
    assert [tree.root(n).hex() for n in range(1, 9)] == VECTOR_ROOTS
    assert merkle.Tree().root() == merkle.EMPTY_ROOT == ind.sha256(b"")


LEAVES = [os.urandom(32) for _ in range(45)]
TREE = merkle.Tree(LEAVES)


@pytest.mark.parametrize("size", range(0, 46))
def test_every_root_is_the_recursive_mth(size):
    assert TREE.root(size) == ind.mth(LEAVES[:size])


@pytest.mark.parametrize("size", [1, 2, 3, 5, 7, 8, 9, 16, 17, 31, 45])
def test_inclusion_proofs_are_rfc_paths_and_verify_independently(size):
    root = TREE.root(size)
    for i in range(size):
        proof = TREE.inclusion_proof(i, size)
        assert proof == ind.path(i, LEAVES[:size])
        assert ind.verify_inclusion(LEAVES[i], i, size, proof, root)
        assert merkle.verify_inclusion(LEAVES[i], i, size, proof, root)
        if size > 1:  # another leaf at the same place is not included
            other = LEAVES[(i + 1) % size]
            assert not merkle.verify_inclusion(other, i, size, proof, root)
            assert not ind.verify_inclusion(other, i, size, proof, root)


def test_consistency_proofs_verify_independently_and_reject_another_history():
    other = merkle.Tree([*LEAVES[:10], os.urandom(32), *LEAVES[11:]])
    for new in range(1, 46):
        for old in range(0, new + 1):
            proof = TREE.consistency_proof(old, new)
            args = (old, new, TREE.root(old), TREE.root(new), proof)
            assert ind.verify_consistency(*args), (old, new)
            assert merkle.verify_consistency(*args), (old, new)
            if 10 < old < new:  # leaf 10 differs: the other tree's history forked
                assert not merkle.verify_consistency(
                    old, new, other.root(old), TREE.root(new), proof
                )
                assert not ind.verify_consistency(old, new, other.root(old), TREE.root(new), proof)


def test_a_proof_past_the_tree_is_refused():
    with pytest.raises(ValueError):
        TREE.consistency_proof(3, 46)
    with pytest.raises(ValueError):
        TREE.inclusion_proof(45, 45)
    assert not merkle.verify_consistency(5, 3, b"", b"", [])


def test_a_tree_goes_on_from_its_right_edge_alone():
    """A resumed session's tree (carry.py) holds only the edge of its first n leaves:
    its roots and its consistency proofs from n on equal the whole tree's."""
    for n in range(0, 46):
        edge = merkle.Tree(LEAVES[:n]).edge()
        assert len(edge) == bin(n).count("1")
        t = merkle.Tree.from_edge(n, edge)
        for size in range(n + 1, 46):
            t.append(LEAVES[size - 1])
            assert t.root() == TREE.root(size)
            for old in range(n, size + 1):
                assert t.consistency_proof(old, size) == TREE.consistency_proof(old, size)
        assert t.edge() == TREE.edge()
    t = merkle.Tree.from_edge(5, merkle.Tree(LEAVES[:5]).edge())
    t.append(LEAVES[5])
    with pytest.raises(LookupError):  # below the edge: never held
        t.consistency_proof(3, 6)
    with pytest.raises(ValueError):
        merkle.Tree.from_edge(5, [LEAVES[0]])
