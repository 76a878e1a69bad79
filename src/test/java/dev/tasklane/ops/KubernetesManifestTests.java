package dev.tasklane.ops;

import java.io.IOException;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import javax.xml.parsers.DocumentBuilderFactory;

import dev.tasklane.testsupport.IntegrationTest;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.HTTPGetAction;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.Probe;
import io.fabric8.kubernetes.api.model.VolumeMount;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicy;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicyEgressRule;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicyPeer;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.w3c.dom.Document;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

/**
 * The manifests under {@code k8s/}: every overlay rendered with {@code kubectl kustomize} and
 * every document checked against the Kubernetes API model (unknown kinds, wrong types, unknown
 * fields); the two custom resources against the fields their CRDs define, written down here.
 * Where kubectl is missing, every file is still checked on its own, and the test says plainly
 * that the overlays were not rendered. Then the invariants a safe deployment needs.
 */
final class KubernetesManifestTests extends IntegrationTest {

    private static final Path K8S = Path.of("k8s");
    private static final List<String> OVERLAYS = List.of("base", "overlays/dev", "overlays/prod");
    private static final KubernetesSerialization SERIALIZATION = new KubernetesSerialization();
    /** The kubectl to render with: {@code KUBECTL} if set (a path, or a missing one to try the fallback). */
    private static final String KUBECTL = System.getenv().getOrDefault("KUBECTL", "kubectl");

    /** Each rendered overlay (or, without kubectl, each file) and its documents. */
    private static final Map<String, List<Object>> RENDERED = new LinkedHashMap<>();
    private static boolean rendered;

    @BeforeAll
    static void render() throws Exception {
        assertThat(K8S.resolve("base/kustomization.yaml")).exists();
        rendered = kubectlAvailable();
        if (rendered) {
            for (String overlay : OVERLAYS) {
                RENDERED.put(overlay, parse(overlay, kustomize(K8S.resolve(overlay))));
            }
        } else {
            System.out.println("kubectl not found: the overlays were NOT rendered; checking every file under k8s/ on its own");
            try (Stream<Path> files = Files.walk(K8S)) {
                for (Path file : files.filter(f -> f.toString().endsWith(".yaml")).sorted().toList()) {
                    if (!file.getFileName().toString().equals("kustomization.yaml")) {
                        RENDERED.put(file.toString(), parse(file.toString(), Files.readString(file)));
                    }
                }
            }
        }
        assertThat(RENDERED.values().stream().mapToInt(List::size).sum()).as("documents checked").isGreaterThan(10);
    }

    @Test
    void everyDocumentIsAKnownKindWithOnlyKnownFieldsOfTheRightTypes() {
        // parse() already failed on wrong types; here: kinds and fields.
        List<String> problems = new ArrayList<>();
        RENDERED.forEach((source, documents) -> {
            for (Object document : documents) {
                if (document instanceof GenericKubernetesResource custom) {
                    problems.addAll(CustomResources.check(source, custom));
                } else {
                    unknownFields(source + " " + ((HasMetadata) document).getKind(), document, new IdentityHashMap<>(),
                            problems);
                }
            }
        });
        assertThat(problems).isEmpty();
    }

    @Test
    void everyOverlayRendersTheServiceAndProdAddsBudgetScalingAndMonitoring() {
        if (!rendered) {
            return; // without kubectl there are no overlays to look at; render() said so
        }
        assertThat(kinds("overlays/dev")).contains("Namespace", "Deployment", "Service", "ConfigMap", "Secret",
                "ServiceAccount", "NetworkPolicy", "StatefulSet");
        assertThat(kinds("overlays/prod")).contains("Deployment", "Service", "ConfigMap", "ServiceAccount",
                "NetworkPolicy", "PodDisruptionBudget", "ScaledObject", "ServiceMonitor")
                .doesNotContain("HorizontalPodAutoscaler", "Secret");
        assertThat(deployment("overlays/dev").getSpec().getReplicas()).isEqualTo(1);
        assertThat(deployment("overlays/prod").getSpec().getReplicas()).isEqualTo(3);
        assertThat(deployment("overlays/dev").getSpec().getTemplate().getSpec().getVolumes()).isNotEmpty();
    }

    @Test
    void theDeploymentRunsLockedDownWithResourcesAndTheImageThePomBuilds() throws Exception {
        String image = pomImage();
        for (Deployment deployment : deployments()) {
            PodSpec pod = deployment.getSpec().getTemplate().getSpec();
            Container container = pod.getContainers().get(0);
            assertThat(container.getImage()).startsWith(image.substring(0, image.indexOf(':') + 1));
            assertThat(Boolean.TRUE.equals(pod.getSecurityContext().getRunAsNonRoot())
                    || Boolean.TRUE.equals(container.getSecurityContext().getRunAsNonRoot())).isTrue();
            assertThat(pod.getSecurityContext().getRunAsUser()).isNotNull().isNotZero();
            assertThat(container.getSecurityContext().getReadOnlyRootFilesystem()).isTrue();
            assertThat(container.getSecurityContext().getAllowPrivilegeEscalation()).isFalse();
            assertThat(container.getSecurityContext().getCapabilities().getDrop()).contains("ALL");
            assertThat(container.getVolumeMounts()).anySatisfy(mount -> assertThat(mount.getMountPath()).isEqualTo("/tmp"));
            assertThat(container.getResources().getRequests()).containsKeys("cpu", "memory");
            assertThat(container.getResources().getLimits()).containsKey("memory");
            assertThat(container.getLifecycle().getPreStop()).isNotNull();
        }
        if (rendered) {
            assertThat(deployment("base").getSpec().getTemplate().getSpec().getContainers().get(0).getImage())
                    .isEqualTo(image);
        }
    }

    @Test
    void theGracePeriodOutlastsThePreStopPauseAndTheDrain() {
        for (Deployment deployment : deployments()) {
            PodSpec pod = deployment.getSpec().getTemplate().getSpec();
            Container container = pod.getContainers().get(0);
            List<String> preStop = container.getLifecycle().getPreStop().getExec().getCommand();
            assertThat(preStop.get(0)).isEqualTo("sleep");
            long pause = Long.parseLong(preStop.get(1));
            Duration drain = Duration.parse("PT" + setting("SPRING_LIFECYCLE_TIMEOUT_PER_SHUTDOWN_PHASE").toUpperCase());
            assertThat(pod.getTerminationGracePeriodSeconds()).isGreaterThan(pause + drain.toSeconds());
        }
    }

    @Test
    void theProbesAskThisServiceForPathsItAnswers() {
        for (Deployment deployment : deployments()) {
            Container container = deployment.getSpec().getTemplate().getSpec().getContainers().get(0);
            Map<String, Probe> probes = Map.of("liveness", container.getLivenessProbe(),
                    "readiness", container.getReadinessProbe(), "startup", container.getStartupProbe());
            probes.forEach((kind, probe) -> {
                HTTPGetAction get = probe.getHttpGet();
                assertThat(get).as(kind + " probe").isNotNull();
                assertThat(get.getPort().getStrVal()).isEqualTo("http");
                anonymous().get().uri(get.getPath()).exchange().expectStatus().isOk().expectBody();
            });
            assertThat(container.getLivenessProbe().getHttpGet().getPath()).isEqualTo("/actuator/health/liveness");
            assertThat(container.getReadinessProbe().getHttpGet().getPath()).isEqualTo("/actuator/health/readiness");
            assertThat(container.getPorts()).anySatisfy(port -> {
                assertThat(port.getName()).isEqualTo("http");
                assertThat(port.getContainerPort()).isEqualTo(8080);
            });
        }
    }

    // ---- rendering and parsing

    private static boolean kubectlAvailable() {
        try {
            Process process = new ProcessBuilder(KUBECTL, "version", "--client").redirectErrorStream(true).start();
            process.getInputStream().readAllBytes();
            return process.waitFor(30, TimeUnit.SECONDS) && process.exitValue() == 0;
        } catch (IOException e) {
            return false;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    private static String kustomize(Path overlay) throws Exception {
        Process process = new ProcessBuilder(KUBECTL, "kustomize", overlay.toString()).start();
        byte[] out = process.getInputStream().readAllBytes();
        String err = new String(process.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(process.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(process.exitValue()).as("kubectl kustomize %s: %s", overlay, err).isZero();
        return new String(out, StandardCharsets.UTF_8);
    }

    private static List<Object> parse(String source, String yaml) {
        List<Object> documents = new ArrayList<>();
        for (String document : yaml.split("(?m)^---\\s*$")) {
            if (document.lines().allMatch(line -> line.isBlank() || line.strip().startsWith("#"))) {
                continue;
            }
            try {
                documents.add(SERIALIZATION.unmarshal(document));
            } catch (RuntimeException e) {
                fail(source + ": a document does not fit the model: " + e.getMessage());
            }
        }
        return documents;
    }

    /** Walks the model objects and collects every field the model did not know. */
    private static void unknownFields(String path, Object node, Map<Object, Boolean> seen, List<String> problems) {
        if (node == null || seen.put(node, true) != null) {
            return;
        }
        if (node instanceof Collection<?> items) {
            int i = 0;
            for (Object item : items) {
                unknownFields(path + "[" + i++ + "]", item, seen, problems);
            }
            return;
        }
        if (node instanceof Map<?, ?> map) {
            map.forEach((key, value) -> unknownFields(path + "." + key, value, seen, problems));
            return;
        }
        if (!node.getClass().getPackageName().startsWith("io.fabric8.kubernetes.api.model")) {
            return;
        }
        for (Method getter : node.getClass().getMethods()) {
            if (getter.getParameterCount() != 0 || Modifier.isStatic(getter.getModifiers())
                    || !getter.getName().startsWith("get") || getter.getName().equals("getClass")) {
                continue;
            }
            try {
                Object value = getter.invoke(node);
                if (getter.getName().equals("getAdditionalProperties")) {
                    if (value instanceof Map<?, ?> extra && !extra.isEmpty()) {
                        problems.add(path + ": unknown fields " + extra.keySet());
                    }
                } else {
                    unknownFields(path + "." + getter.getName().substring(3), value, seen, problems);
                }
            } catch (ReflectiveOperationException e) {
                problems.add(path + ": cannot read " + getter.getName() + ": " + e);
            }
        }
    }

    // ---- what the invariants look at

    @Test
    void theNetworkPolicyNamesWhereDnsAndPostgresqlAreAndProdVerifiesTheDatabasesCertificate() throws Exception {
        if (!rendered) {
            NetworkPolicy base = networkPolicy("k8s/base/networkpolicy.yaml");
            assertDnsIsTheClusterDns(base);
            assertThat(egressTo(base, 5432)).allSatisfy(peer -> assertThat(peer.getPodSelector().getMatchLabels())
                    .containsEntry("app.kubernetes.io/name", "postgres"));
            assertThat(Files.readString(K8S.resolve("overlays/prod/kustomization.yaml")))
                    .contains("sslMode=verify-full&sslRootCert=").contains("ipBlock");
            return;
        }
        for (String overlay : OVERLAYS) {
            assertDnsIsTheClusterDns(networkPolicy(overlay));
        }
        // dev: the overlay's own PostgreSQL pod, by its label
        List<NetworkPolicyPeer> dev = egressTo(networkPolicy("overlays/dev"), 5432);
        assertThat(dev).singleElement().satisfies(peer -> {
            assertThat(peer.getIpBlock()).isNull();
            assertThat(peer.getPodSelector().getMatchLabels()).containsEntry("app.kubernetes.io/name", "postgres");
        });
        assertThat(RENDERED.get("overlays/dev").stream().filter(HasMetadata.class::isInstance).map(HasMetadata.class::cast)
                .filter(d -> d.getKind().equals("StatefulSet"))
                .map(d -> d.getMetadata().getLabels().get("app.kubernetes.io/name"))).contains("postgres");
        // prod: an address range to set, never any address
        List<NetworkPolicyPeer> prod = egressTo(networkPolicy("overlays/prod"), 5432);
        assertThat(prod).isNotEmpty().allSatisfy(peer -> {
            assertThat(peer.getIpBlock()).isNotNull();
            assertThat(peer.getIpBlock().getCidr()).isNotEqualTo("0.0.0.0/0");
        });
        // prod: TLS that checks the server's certificate against a CA mounted from a Secret
        String url = RENDERED.get("overlays/prod").stream().filter(ConfigMap.class::isInstance).map(ConfigMap.class::cast)
                .map(config -> config.getData().get("SPRING_R2DBC_URL")).filter(java.util.Objects::nonNull)
                .findFirst().orElseThrow();
        Matcher ca = Pattern.compile("sslMode=verify-full&sslRootCert=(/\\S+)/[^/&]+$").matcher(url);
        assertThat(ca.find()).as(url).isTrue();
        PodSpec pod = deployment("overlays/prod").getSpec().getTemplate().getSpec();
        String volume = pod.getContainers().get(0).getVolumeMounts().stream()
                .filter(mount -> mount.getMountPath().equals(ca.group(1))).map(VolumeMount::getName).findFirst()
                .orElseThrow(() -> new AssertionError("nothing mounted at " + ca.group(1)));
        assertThat(pod.getVolumes()).anySatisfy(v -> {
            assertThat(v.getName()).isEqualTo(volume);
            assertThat(v.getSecret()).isNotNull();
        });
    }

    private static void assertDnsIsTheClusterDns(NetworkPolicy policy) {
        assertThat(egressTo(policy, 53)).isNotEmpty().allSatisfy(peer -> {
            assertThat(peer.getNamespaceSelector().getMatchLabels())
                    .containsEntry("kubernetes.io/metadata.name", "kube-system");
            assertThat(peer.getPodSelector().getMatchLabels()).containsEntry("k8s-app", "kube-dns");
        });
    }

    /** The peers of every egress rule that opens {@code port}; a rule without peers fails (any address). */
    private static List<NetworkPolicyPeer> egressTo(NetworkPolicy policy, int port) {
        List<NetworkPolicyPeer> peers = new ArrayList<>();
        for (NetworkPolicyEgressRule rule : policy.getSpec().getEgress()) {
            if (rule.getPorts().stream().anyMatch(p -> p.getPort() != null
                    && String.valueOf(p.getPort().getValue()).equals(String.valueOf(port)))) {
                assertThat(rule.getTo()).as("egress to port " + port + " names its destinations").isNotEmpty();
                peers.addAll(rule.getTo());
            }
        }
        return peers;
    }

    private static NetworkPolicy networkPolicy(String source) {
        return RENDERED.get(source).stream().filter(NetworkPolicy.class::isInstance).map(NetworkPolicy.class::cast)
                .filter(policy -> policy.getMetadata().getName().equals("tasklane")).findFirst().orElseThrow();
    }

    private static List<String> kinds(String overlay) {
        return RENDERED.get(overlay).stream().map(d -> ((HasMetadata) d).getKind()).toList();
    }

    private static Deployment deployment(String overlay) {
        return RENDERED.get(overlay).stream().filter(Deployment.class::isInstance).map(Deployment.class::cast)
                .findFirst().orElseThrow();
    }

    private static List<Deployment> deployments() {
        List<Deployment> deployments = RENDERED.values().stream().flatMap(List::stream)
                .filter(Deployment.class::isInstance).map(Deployment.class::cast).toList();
        assertThat(deployments).isNotEmpty();
        return deployments;
    }

    /** A setting from the base's ConfigMap generator (every overlay inherits it). */
    private static String setting(String name) {
        try {
            Matcher matcher = Pattern.compile("- " + name + "=(\\S+)")
                    .matcher(Files.readString(K8S.resolve("base/kustomization.yaml")));
            assertThat(matcher.find()).as(name + " in the base ConfigMap").isTrue();
            return matcher.group(1);
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    /** The image the pom's Jib configuration builds: name and tag. */
    private static String pomImage() throws Exception {
        Document pom = DocumentBuilderFactory.newInstance().newDocumentBuilder().parse(Path.of("pom.xml").toFile());
        String name = pom.getElementsByTagName("tasklane.image").item(0).getTextContent().strip();
        org.w3c.dom.NodeList children = pom.getDocumentElement().getChildNodes();
        for (int i = 0; i < children.getLength(); i++) {
            if (children.item(i).getNodeName().equals("version")) {
                return name + ":" + children.item(i).getTextContent().strip();
            }
        }
        throw new IllegalStateException("pom.xml has no version");
    }

    /**
     * The two custom resources, checked against the fields their CRDs define (KEDA 2.x
     * {@code keda.sh/v1alpha1 ScaledObject}, Prometheus Operator {@code monitoring.coreos.com/v1
     * ServiceMonitor}), as far as these manifests use them: unknown fields and wrong kinds of
     * value fail, required fields must be there.
     */
    private static final class CustomResources {

        private static final Map<String, Object> SCALED_OBJECT = Map.of(
                "scaleTargetRef", Map.of("name", String.class, "kind", String.class, "apiVersion", String.class,
                        "envSourceContainerName", String.class),
                "minReplicaCount", Integer.class, "maxReplicaCount", Integer.class, "pollingInterval", Integer.class,
                "cooldownPeriod", Integer.class, "idleReplicaCount", Integer.class,
                "triggers", List.of(Map.of("type", String.class, "name", String.class, "metricType", String.class,
                        "useCachedMetrics", Boolean.class, "metadata", Map.class,
                        "authenticationRef", Map.of("name", String.class, "kind", String.class))),
                "advanced", Map.class, "fallback", Map.class);
        private static final Set<String> POSTGRESQL_TRIGGER = Set.of("connectionFromEnv", "host", "port", "userName",
                "dbName", "sslmode", "passwordFromEnv", "query", "targetQueryValue", "activationTargetQueryValue");
        private static final Map<String, Object> SERVICE_MONITOR = Map.of(
                "jobLabel", String.class, "targetLabels", List.of(String.class), "podTargetLabels", List.of(String.class),
                "endpoints", List.of(Map.of("port", String.class, "targetPort", Object.class, "path", String.class,
                        "scheme", String.class, "interval", String.class, "scrapeTimeout", String.class,
                        "honorLabels", Boolean.class, "params", Map.class, "relabelings", List.class,
                        "metricRelabelings", List.class)),
                "selector", Map.of("matchLabels", Map.class, "matchExpressions", List.class),
                "namespaceSelector", Map.of("any", Boolean.class, "matchNames", List.of(String.class)),
                "sampleLimit", Integer.class);

        static List<String> check(String source, GenericKubernetesResource resource) {
            String where = source + " " + resource.getApiVersion() + " " + resource.getKind();
            Object spec = resource.getAdditionalProperties().get("spec");
            List<String> problems = new ArrayList<>();
            if (resource.getMetadata() == null || resource.getMetadata().getName() == null) {
                problems.add(where + ": no metadata.name");
            }
            switch (resource.getApiVersion() + " " + resource.getKind()) {
                case "keda.sh/v1alpha1 ScaledObject" -> {
                    conform(where + ".spec", spec, SCALED_OBJECT, problems);
                    Map<?, ?> map = (Map<?, ?>) spec;
                    require(where, map, List.of("scaleTargetRef", "triggers"), problems);
                    for (Object trigger : (List<?>) map.get("triggers")) {
                        Map<?, ?> t = (Map<?, ?>) trigger;
                        if ("postgresql".equals(t.get("type"))) {
                            Set<Object> keys = Set.copyOf(((Map<?, ?>) t.get("metadata")).keySet());
                            if (!POSTGRESQL_TRIGGER.containsAll(keys)) {
                                problems.add(where + ": unknown postgresql trigger fields in " + keys);
                            }
                            if (!keys.containsAll(Set.of("query", "targetQueryValue"))) {
                                problems.add(where + ": the postgresql trigger needs query and targetQueryValue");
                            }
                        }
                    }
                }
                case "monitoring.coreos.com/v1 ServiceMonitor" -> {
                    conform(where + ".spec", spec, SERVICE_MONITOR, problems);
                    require(where, (Map<?, ?>) spec, List.of("selector", "endpoints"), problems);
                }
                default -> problems.add(where + ": unknown kind");
            }
            return problems;
        }

        private static void require(String where, Map<?, ?> spec, List<String> fields, List<String> problems) {
            fields.stream().filter(f -> spec == null || !spec.containsKey(f))
                    .forEach(f -> problems.add(where + ": spec." + f + " is required"));
        }

        private static void conform(String path, Object value, Object schema, List<String> problems) {
            if (schema instanceof Map<?, ?> fields) {
                if (!(value instanceof Map<?, ?> map)) {
                    problems.add(path + ": should be an object, is " + value);
                    return;
                }
                map.forEach((key, child) -> {
                    if (!fields.containsKey(key)) {
                        problems.add(path + ": unknown field " + key);
                    } else {
                        conform(path + "." + key, child, fields.get(key), problems);
                    }
                });
            } else if (schema instanceof List<?> items) {
                if (!(value instanceof List<?> list)) {
                    problems.add(path + ": should be a list, is " + value);
                    return;
                }
                for (int i = 0; i < list.size(); i++) {
                    conform(path + "[" + i + "]", list.get(i), items.get(0), problems);
                }
            } else if (schema == Integer.class) {
                if (!(value instanceof Integer || value instanceof Long)) {
                    problems.add(path + ": should be a whole number, is " + value);
                }
            } else if (schema == Map.class || schema == List.class) {
                if (!((Class<?>) schema).isInstance(value)) {
                    problems.add(path + ": should be " + ((Class<?>) schema).getSimpleName() + ", is " + value);
                }
            } else if (schema != Object.class && !((Class<?>) schema).isInstance(value)) {
                problems.add(path + ": should be " + ((Class<?>) schema).getSimpleName() + ", is " + value);
            }
        }
    }
}
