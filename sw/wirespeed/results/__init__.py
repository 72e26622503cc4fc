"""A run's results: the record (``results.json``, :mod:`.record`), its CSV tables
(:mod:`.tables`), the writer that keeps them on disk as the run goes (:mod:`.writer`) and
reading them back (:mod:`.resume`)."""

from .record import FORMAT, RunHeader, RunRecord, json_schema
from .resume import RecordError, ResumeError, load_record, load_run
from .tables import TRIALS_CSV, tables_of
from .writer import ResultsWriter, WriteError, atomic_write_text

__all__ = ["FORMAT", "RunHeader", "RunRecord", "json_schema", "RecordError", "ResumeError", "load_record",
           "load_run", "tables_of", "TRIALS_CSV", "ResultsWriter", "WriteError", "atomic_write_text"]
