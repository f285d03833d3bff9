"""Every operation's request, declared once, by family; core/operations.py indexes them."""
