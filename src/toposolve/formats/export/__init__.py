"""A plan as the objects each scheduler accepts (``toposolve export``; see ``docs/formats.md``)."""
