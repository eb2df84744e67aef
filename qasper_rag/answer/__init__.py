"""The answer stage of qasper_rag: its modules are imported by their full names (`qasper_rag.answer.<module>`)."""
