"""``wirespeed serve``: the tester as an appliance, a REST API over the library core
(docs/appliance.md). Runs are the results folders the command line writes, under
``DATA/runs/<id>/``, indexed in SQLite (:mod:`.store`); each run is a :class:`wirespeed.Run` in
a worker thread (:mod:`.runs`); profiles are config files (:mod:`.profiles`, the shipped ones in
``profiles/``); whole runs are deleted, zipped, printed and compared by :mod:`.archive`, and
:mod:`.history` reads what earlier runs say of the tester; :mod:`.api` is the FastAPI
application (``create_app(Settings(...))``, with the routes of :mod:`.api_runs` and
:mod:`.api_plans`) and :mod:`.settings` what the command gives it. Nothing is imported here: the
command line imports :mod:`.settings` without FastAPI."""
