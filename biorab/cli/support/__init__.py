"""What the CLI's commands share and no command owns: exit codes, OS and Ray error messages, progress bars,
stop signals, the process environment defaults and flag help. The commands are the modules of
`biorab.cli`; `biorab.cli.main:app` is the console script."""
