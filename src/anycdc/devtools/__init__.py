"""Developer tooling: the project's own local Kafka broker, the demo, shared paths.

Nothing here is needed to *use* anycdc against your own Kafka and Spark; it is what
``make test``, ``make demo`` and ``anycdc dev ...`` run on a developer machine or in CI.
"""
