"""The bilingual bridge: Korean and English term pairs a team's documents write down
(mined at ingest, :mod:`.mine`) and its own glossary file (:mod:`.team_file`), looked up by
:class:`.glossary.Glossary`. No word list is shipped: no bilingual dictionary with a licence
to ship is on PyPI or Debian, and one written here would be written by people who have read
the benchmark's questions."""
