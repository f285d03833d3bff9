"""One shape per result: every result's `to_dict()` is exactly the object its declared schema
describes (the keys, and each value's JSON type), on real results of both stores; and the
rules of a shape (hidden fields, merged ones, derived properties) hold."""

from __future__ import annotations

import dataclasses

import jsonschema
import pytest
from conftest import service

from gitckpt.core.shape import HIDDEN, MERGED, Shaped, schema
from gitckpt.mcp.server import TOOLS


def _exactly(result, *types) -> None:
    """The result answers with every key the schema of `types` declares, no other, each of
    its declared JSON type."""
    s = schema(*types)
    d = result.to_dict()
    assert set(d) <= set(s["properties"]), sorted(set(d) - set(s["properties"]))
    jsonschema.validate(d, {**s, "additionalProperties": False})


def test_every_result_is_the_object_its_schema_declares(ws, monkeypatch, tmp_path):
    monkeypatch.setenv("GITCKPT_WATCH", "off")
    root = ws.root
    out = {t.name: t.outputs for t in TOOLS}
    init = service.init(root, "shapes", goal="g", constraints="c")
    _exactly(init, *out["ckpt_init"])
    assert set(init.to_dict()) == set(schema(*out["ckpt_init"])["properties"])
    (root / "src" / "app.py").write_text("print('changed')\n")
    (root / ".env").write_text("TOKEN=1\n")  # left out: skipped is a list of records
    save = service.save(root, "one", conclusion="c", next="n", decisions=["d"])
    _exactly(save, *out["ckpt_save"])
    assert save.to_dict()["skipped"][0]["reason"] == "sensitive"
    (root / "src" / "app.py").write_text("print('drifted')\n")
    drift = service.capture(root)
    _exactly(drift, *out["ckpt_capture"])
    resume = service.resume(root)
    _exactly(resume, *out["ckpt_resume"])
    assert set(resume.to_dict()) == set(schema(*out["ckpt_resume"])["properties"])
    log = service.log(root)
    _exactly(log, *out["ckpt_log"])
    assert log.to_dict()["drifts"][0]["commit"] == drift.commit
    _exactly(service.tasks(root), *out["ckpt_log"])
    _exactly(service.diff(root, "0", patch=True), *out["ckpt_diff"])
    preview = service.restore(root, "1")
    _exactly(preview, *out["ckpt_restore"])
    assert set(preview.to_dict()) == set(schema(*out["ckpt_restore"])["properties"])
    applied = service.restore(root, "1", apply=True, expect=preview.plan.id)
    _exactly(applied, *out["ckpt_restore"])
    revert = service.revert(root, "1")
    _exactly(revert, *out["ckpt_revert"])
    assert set(revert.to_dict()) == set(schema(*out["ckpt_revert"])["properties"])
    _exactly(service.compress(root, dry_run=True), *out["ckpt_compress"])
    exported = service.export(root, tmp_path / "pkg")
    _exactly(exported, *out["ckpt_export"])
    _exactly(service.import_(root, tmp_path / "pkg", dry_run=True), *out["ckpt_import"])
    ws.fsck()


@dataclasses.dataclass(frozen=True)
class Inner(Shaped):
    a: int
    secret: str = dataclasses.field(default="x", metadata=HIDDEN)


@dataclasses.dataclass(frozen=True)
class Outer(Shaped):  # a merged field's class is found where the result's module has it
    inner: Inner = dataclasses.field(metadata=MERGED)
    b: tuple[str, ...] = ()
    derived = ("a", "total")

    @property
    def a(self) -> int:  # overrides the merged key
        return self.inner.a * 10

    @property
    def total(self) -> int | None:
        return None


def test_hidden_fields_are_kept_out_merged_ones_spread_in_and_derived_ones_added():
    assert Outer(Inner(1), ("p",)).to_dict() == {"a": 10, "b": ["p"], "total": None}
    assert schema(Outer)["properties"] == {"a": {"type": "integer"}, "b": {"type": "array"},
                                           "total": {"type": ["integer", "null"]}}


def test_a_derived_name_that_is_not_an_annotated_property_is_refused():
    @dataclasses.dataclass(frozen=True)
    class Bad(Shaped):
        a: int
        derived = ("a_method",)

        def a_method(self) -> int:
            return 1

    with pytest.raises(TypeError, match="not an annotated property"):
        schema(Bad)
