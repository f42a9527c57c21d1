"""After the search: disaggregation, repacking, and the reasons for pending jobs."""
