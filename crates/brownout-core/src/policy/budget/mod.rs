//! Retry budgets: layers that only veto retries the Retry layer proposes. Each file is one.

pub mod adaptive;
pub mod grpc;
pub mod tps;
