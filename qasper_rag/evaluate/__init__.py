"""The evaluate stage of qasper_rag: its modules are imported by their full names (`qasper_rag.evaluate.<module>`)."""
