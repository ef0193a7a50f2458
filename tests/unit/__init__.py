"""Tests of one module of core at a time, each file named after the module it tests."""
