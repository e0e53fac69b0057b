"""MoA graphs and the data they come from: `moa`, `drugmechdb` (loader), `primekg` (a user's PrimeKG),
`simulator` (the qualitative simulator), `cut_edges`, and `stats` (reference counts). Imports nothing."""
