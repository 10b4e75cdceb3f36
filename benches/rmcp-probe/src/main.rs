use rmcp::ServiceExt;
use rmcp::handler::server::ServerHandler;
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::{tool, tool_handler, tool_router};

#[derive(Clone)]
struct Probe {
    router: ToolRouter<Self>,
}

#[tool_router]
impl Probe {
    fn new() -> Self {
        Self { router: Self::tool_router() }
    }

    #[tool(description = "Return a greeting")]
    async fn greet(&self) -> String {
        "hello".to_string()
    }
}

#[tool_handler]
impl ServerHandler for Probe {}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let service = Probe::new()
        .serve(rmcp::transport::io::stdio())
        .await
        .expect("serve");
    service.waiting().await.expect("wait");
}
