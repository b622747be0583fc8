"""Where raw messages come from: files here; Kafka through Spark in :mod:`anycdc.spark`."""

from anycdc.source.files import RawMessage, iter_file_messages, list_source_files

__all__ = ["RawMessage", "iter_file_messages", "list_source_files"]
