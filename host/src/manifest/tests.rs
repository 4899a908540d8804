use super::*;

#[test]
fn embedded_default_is_the_local_network_in_autonomous_mode() {
    let m = Manifest::embedded_default();
    assert_eq!(m.network.name, NetworkName::Local);
    assert_eq!(m.network.grpc, None);
    assert_eq!(m.context.mode, None);
    assert!(m.plugins.is_empty());
}

#[test]
fn rejects_unknown_keys_and_bad_limits() {
    let err = Manifest::parse("[network]\nnmae = 'x'", "t", ".".into()).unwrap_err();
    assert!(err.to_string().contains("nmae"), "{err}");
    let text = "[[plugins]]\nname='a'\npath='a.wasm'\n[plugins.limits]\nmemory_mib = 100000";
    let err = Manifest::parse(text, "t", ".".into()).unwrap_err();
    assert!(
        err.to_string()
            .contains("plugins[0] (a): limits.memory_mib"),
        "{err}"
    );
}

#[test]
fn a_state_dir_without_a_backend_and_misplaced_state_settings_are_refused() {
    let err = Manifest::parse("[state]\ndir = \"/tmp/x\"", "t", ".".into()).unwrap_err();
    assert!(
        err.to_string().contains("state.dir needs state.backend"),
        "{err}"
    );
    let text = "[state]\nbackend = \"journal\"\npresumed_stopped_ms = 5000";
    let err = Manifest::parse(text, "t", ".".into()).unwrap_err();
    assert!(
        err.to_string()
            .contains("presumed_stopped_ms applies to backend = \"sqlite\" or \"redis\" only"),
        "{err}"
    );
    let text = "[state]\nbackend = \"sqlite\"\npresumed_stopped_ms = 10";
    let err = Manifest::parse(text, "t", ".".into()).unwrap_err();
    assert!(
        err.to_string().contains("between 1000 and 3600000"),
        "{err}"
    );
    let text = "[state]\nbackend = \"sqlite\"\nmax_plugin_bytes = 1";
    let m = Manifest::parse(text, "t", ".".into()).unwrap();
    assert_eq!(m.state.quota().plugin_bytes, 1);
    let text = "[state]\nbackend = \"journal\"\nmax_plugin_bytes = 1024";
    let m = Manifest::parse(text, "t", ".".into()).unwrap();
    assert_eq!(m.state.quota().plugin_bytes, 1024);
    assert_eq!(m.state.quota().total_bytes, 256 << 20);
}

#[test]
fn a_running_emulator_needs_its_mirror_named() {
    let text = "[network]\nname = \"local\"\ngrpc = \"127.0.0.1:50299\"\n";
    let err = Manifest::parse(text, "m", PathBuf::from(".")).unwrap_err();
    assert!(err.to_string().contains("set network.mirror_url"), "{err}");
    let text = "[network]\nname = \"local\"\ngrpc = \"127.0.0.1:50299\"\nmirror_url = \"http://127.0.0.1:38099/api/v1\"\n";
    Manifest::parse(text, "m", PathBuf::from(".")).unwrap();
}

#[test]
fn rejects_unknown_capability_and_duplicate_names() {
    let text = "[[plugins]]\nname='a'\npath='a.wasm'\ncapabilities=['fs']";
    let err = Manifest::parse(text, "t", ".".into()).unwrap_err();
    assert!(
        err.to_string().contains("unknown capability \"fs\""),
        "{err}"
    );
    let text = "[[plugins]]\nname='a'\npath='a.wasm'\n[[plugins]]\nname='a'\npath='b.wasm'";
    let err = Manifest::parse(text, "t", ".".into()).unwrap_err();
    assert!(err.to_string().contains("duplicate plugin name"), "{err}");
}

#[test]
fn a_fuel_limit_needs_fuel_counting_on_the_engine() {
    let plugin = "[[plugins]]\nname='a'\npath='a.wasm'\n[plugins.limits]\nfuel = 1000";
    let err = Manifest::parse(plugin, "t", ".".into()).unwrap_err();
    assert!(
        err.to_string()
            .contains("limits.fuel needs [engine] fuel = true"),
        "{err}"
    );
    let text = format!("[engine]\nfuel = true\n{plugin}");
    assert!(Manifest::parse(&text, "t", ".".into()).is_ok());
}

#[test]
fn config_table_becomes_json() {
    let text = "[[plugins]]\nname='a'\npath='a.wasm'\n[plugins.config]\nmaxRecipients = 2";
    let m = Manifest::parse(text, "t", ".".into()).unwrap();
    assert_eq!(m.plugins[0].config_json(), r#"{"maxRecipients":2}"#);
}
