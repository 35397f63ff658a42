"""What the tests share: fixtures, servers, model builders and helpers, by concept.

Test modules import from here and never from one another (tests/meta/test_architecture.py
checks it)."""
