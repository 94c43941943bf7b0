"""The checkout's own conftest: nothing here. The plugin is registered as a pytest11 entry point."""
