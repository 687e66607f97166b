"""The fleet Spark job's parts, one job each (`fleet/merge_raw.py` is its entry point).

Layers, bottom first; a module imports only those before it:
1. `contract`: the raw contract's schema, footer keys and row checks (docs/raw-contract.md).
2. `options` (the command line), `storage` (local paths and object stores, S3 settings).
3. `footers` (the footer pass, on the executors), `selection` (which files, cap, weights).
4. `aggregate` (the data pass in Spark SQL), `output` (the merged file), `spark` (the
   session and what its failures say).

The executors run `footers` (and what it uses): `spark.spark_session` has cloudpickle ship
this package's functions by value, as it ships `__main__`'s, so executors need pyspark and
pyarrow and nothing of kfdo.
"""
