"""Projections: pure folds of events into views (budgets, verdicts, failure modes, decisive
rounds, the round cursor, catalogue tables, reports). Never imports textual."""
