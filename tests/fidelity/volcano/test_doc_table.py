"""``docs/volcano-tests.md`` lists exactly what the case data says (regenerate with
``python tests/volcano/doc_table.py``)."""

from fidelity.volcano.doc_table import DOC, current_section, render


def test_doc_table_is_current():
    assert current_section(DOC.read_text(encoding="utf-8")) == render()
