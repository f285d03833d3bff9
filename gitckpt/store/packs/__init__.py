"""git pack files: read in place and written for large scans."""
