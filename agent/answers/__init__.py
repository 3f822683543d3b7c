"""Answers without an LLM: the sentences an extractive answer quotes and how they are chosen.

:mod:`.extractive` quotes the sentences that best answer the question, with citations,
among the :mod:`.candidates` of the retrieved passages; :mod:`.lead` judges whether the
sentence it leads with answers; :mod:`.kind` tells what kind of answer a question asks for
(a time, an amount...) and whether a sentence holds one; :mod:`.sentences` splits a passage
into the sentences, list items, table rows and headings they work on.
"""
