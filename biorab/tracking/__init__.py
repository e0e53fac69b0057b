"""MLflow tracking of runs and sweeps (`biorab.tracking.experiment`): one parent run per `biorab run` or
sweep, one child per cell, opened when the work starts. Importing this package does not import mlflow."""
