"""churn-model: weekly churn-risk scoring."""
