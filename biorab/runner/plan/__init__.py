"""Planning a run: the experiment sources (kinds of experiment) and the cells, slices and pending rows they
plan (`cell_slices`)."""
