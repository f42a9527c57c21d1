"""The compact native format (``apiVersion: toposolve/v1``): reader, writer, name patterns."""
