"""Helpers the tests (and the benchmarks) share: fixtures, real servers on free ports, builders."""
