"""The run's records (exchanges, findings, results) and the redaction every output passes."""
