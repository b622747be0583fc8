"""Where raw messages come from: files and Kafka dumps here, a topic read straight away in
:mod:`anycdc.source.kafka_topic` (the CLI); Kafka through Spark in :mod:`anycdc.spark`."""

from anycdc.source.files import (
    InputError,
    InputShape,
    RawMessage,
    iter_file_messages,
    json_lines_hint,
    list_source_files,
)

__all__ = [
    "InputError",
    "InputShape",
    "RawMessage",
    "iter_file_messages",
    "json_lines_hint",
    "list_source_files",
]
