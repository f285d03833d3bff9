"""The plain-folder store: the same model in a `.gitckpt` folder, written with the standard
library."""
