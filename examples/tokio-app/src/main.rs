//! Starts the service, runs every check against it and prints what it
//! saw, then which runtime's threads ran it. Exits non-zero if a check
//! failed. `DATABASE_URL` (PostgreSQL) adds the user check on PostgreSQL.

#[tokio::main]
async fn main() {
    let mut failed = false;
    let db = tokio_app::Db::sqlite().await.expect("SQLite");
    let app = tokio_app::start(db).await.expect("start the service");
    for (name, outcome) in tokio_app::run_checks(&app).await {
        println!(
            "{name:10} {}",
            outcome
                .as_ref()
                .map_or_else(|e| format!("FAILED: {e}"), |()| "ok".into())
        );
        failed |= outcome.is_err();
    }
    if let Ok(url) = std::env::var("DATABASE_URL") {
        let pg = tokio_app::start(tokio_app::Db::postgres(&url).await.expect("PostgreSQL"))
            .await
            .expect("start the service on PostgreSQL");
        let outcome = tokio_app::check_user(&pg).await;
        println!(
            "user (pg)  {}",
            outcome
                .as_ref()
                .map_or_else(|e| format!("FAILED: {e}"), |()| "ok".into())
        );
        failed |= outcome.is_err();
        pg.stop.cancel();
    }
    app.stop.cancel();
    println!("runtime    {}", tokio_app::runtime_seen());
    if failed {
        std::process::exit(1);
    }
}
