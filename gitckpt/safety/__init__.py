"""What may be stored and what must never be: scope, ignore rules, sensitive files and secret
redaction."""
