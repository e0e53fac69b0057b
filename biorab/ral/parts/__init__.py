"""The RAL's parts and their assembly: the plug-in points (`plugins`), the testbed corpora (`testbeds`),
the caches around the retriever and the backend (`retriever`, `generator`), the steps on records
(`steps`), the RAL itself (`core.RAL`) and the one place a setting becomes parts (`assembly`). Imports
`biorab.ral.specs` only, within the RAL."""
