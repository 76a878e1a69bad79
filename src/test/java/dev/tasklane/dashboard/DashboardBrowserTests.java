package dev.tasklane.dashboard;

import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.List;

import dev.tasklane.testsupport.TaskFixtures;
import dev.tasklane.testsupport.Tasks;
import dev.tasklane.testsupport.TcpProxy;
import dev.tasklane.testsupport.WorkerIntegrationTest;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.openqa.selenium.By;
import org.openqa.selenium.Dimension;
import org.openqa.selenium.JavascriptExecutor;
import org.openqa.selenium.OutputType;
import org.openqa.selenium.StaleElementReferenceException;
import org.openqa.selenium.TakesScreenshot;
import org.openqa.selenium.WebDriver;
import org.openqa.selenium.WebElement;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.chrome.ChromeDriverService;
import org.openqa.selenium.chrome.ChromeOptions;
import org.openqa.selenium.support.ui.ExpectedConditions;
import org.openqa.selenium.support.ui.WebDriverWait;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.http.MediaType;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The dashboard in a real browser: headless Chromium driven by Selenium against the running
 * service. Needs Debian's {@code chromium} and {@code chromium-driver} (CI installs them); without
 * them the test fails and says so.
 */
final class DashboardBrowserTests extends WorkerIntegrationTest {

    private static final Path CHROMIUM = Path.of("/usr/bin/chromium");
    private static final Path CHROMEDRIVER = Path.of("/usr/bin/chromedriver");
    private static WebDriver browser;

    @LocalServerPort
    private int port;

    @BeforeAll
    static void startBrowser() throws Exception {
        assertThat(Files.isExecutable(CHROMIUM) && Files.isExecutable(CHROMEDRIVER))
                .as("the browser test needs Chromium and its driver: apt-get install chromium chromium-driver")
                .isTrue();
        ChromeOptions options = new ChromeOptions();
        options.setBinary(CHROMIUM.toFile());
        options.addArguments("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                "--disable-background-networking", "--disable-component-update", "--disable-sync",
                "--disable-dev-shm-usage", "--user-data-dir=" + Files.createTempDirectory("chrome-profile"));
        ChromeDriverService service = new ChromeDriverService.Builder()
                .usingDriverExecutable(CHROMEDRIVER.toFile()).usingAnyFreePort().build();
        browser = new ChromeDriver(service, options);
        browser.manage().window().setSize(new Dimension(1280, 900));
    }

    @AfterAll
    static void stopBrowser() {
        if (browser != null) {
            browser.quit();
        }
    }

    @Test
    void aUserEnqueuesATaskWatchesItsProgressToTheEndAndPausesAQueueWithoutReloading() throws Exception {
        String idleQueue = TaskFixtures.uniqueQueue("dashboard");
        new Tasks(api()).enqueue(idleQueue, "{\"type\": \"noop\"}"); // no worker here: it waits, listed
        long failed = new Tasks(api()).enqueue(idleQueue, "{\"type\": \"t\"}").get("id").longValue();
        api().post().uri("/api/v1/queues/{q}/claims", idleQueue).contentType(MediaType.APPLICATION_JSON)
                .bodyValue("{\"workerId\": \"w\", \"types\": [\"t\"]}").exchange().expectStatus().isOk().expectBody()
                .returnResult();
        api().post().uri("/api/v1/tasks/{id}/fail", failed).contentType(MediaType.APPLICATION_JSON)
                .bodyValue("{\"workerId\": \"w\", \"error\": \"down\", \"retry\": false}").exchange()
                .expectStatus().isOk().expectBody().returnResult();
        // Rows are redrawn as counts change: an element found a moment ago may be gone.
        WebDriverWait wait = (WebDriverWait) new WebDriverWait(browser, Duration.ofSeconds(30))
                .ignoring(StaleElementReferenceException.class);

        signIn("http://127.0.0.1:" + port + "/", wait);
        ((JavascriptExecutor) browser).executeScript("window.sameDocument = true;");

        browser.findElement(By.cssSelector("nav a[data-view='enqueue']")).click();
        replace(wait.until(ExpectedConditions.visibilityOfElementLocated(By.id("enqueue-queue"))), "wk-basic");
        replace(browser.findElement(By.id("enqueue-type")), "sleep");
        replace(browser.findElement(By.id("enqueue-payload")), "{\"durationMs\": 2000, \"steps\": 10}");
        browser.findElement(By.id("enqueue-submit")).click();

        wait.until(ExpectedConditions.urlMatches("#/task/\\d+$"));
        wait.until(ExpectedConditions.attributeToBe(By.id("task-progress"), "aria-valuenow", "100"));
        wait.until(ExpectedConditions.textToBe(By.id("task-state"), "succeeded"));
        wait.until(driver -> progressEvents(driver).size() == 10);
        assertThat(browser.findElement(By.id("task-progress-text")).getText()).isEqualTo("100 %");
        assertThat(browser.findElement(By.id("task-result")).getText()).contains("\"sleptMs\": 2000");
        screenshot("dashboard-task.png");

        browser.findElement(By.cssSelector("nav a[data-view='queues']")).click();
        By row = By.cssSelector("#queues-table tr[data-queue='" + idleQueue + "']");
        wait.until(ExpectedConditions.visibilityOfElementLocated(row));
        wait.until(driver -> {
            driver.findElement(row).findElement(By.cssSelector("button[data-queue]")).click();
            return true;
        });
        wait.until(driver -> driver.findElement(row).findElement(By.cssSelector("td:last-child .badge")).getText().equals("paused"));
        assertThat(api().get().uri("/api/v1/queues").exchange().expectBody(String.class).returnResult()
                .getResponseBody()).contains("\"name\":\"" + idleQueue + "\"");

        wait.until(driver -> {
            driver.findElement(row).findElement(By.cssSelector("button[data-queue]")).click();
            return true;
        });
        wait.until(driver -> driver.findElement(row).findElement(By.cssSelector("td:last-child .badge")).getText().equals("active"));

        // flow control: a bad setting is explained in the dialog, a good one shows in the row
        wait.until(driver -> {
            driver.findElement(row).findElement(By.cssSelector("button[data-edit-limits]")).click();
            return true;
        });
        replace(wait.until(ExpectedConditions.visibilityOfElementLocated(By.id("limits-max-running"))), "2");
        replace(browser.findElement(By.id("limits-rate-count")), "30");
        browser.findElement(By.id("limits-save")).click();
        wait.until(ExpectedConditions.textToBePresentInElementLocated(By.id("limits-error"), "rate.periodSeconds"));
        replace(browser.findElement(By.id("limits-rate-period")), "60");
        new org.openqa.selenium.support.ui.Select(browser.findElement(By.id("limits-fairness"))).selectByValue("round-robin");
        browser.findElement(By.id("limits-save")).click();
        wait.until(ExpectedConditions.invisibilityOfElementLocated(By.id("limits-dialog")));
        wait.until(driver -> driver.findElement(row).findElement(By.cssSelector("td.flow")).getText()
                .startsWith("max 2 · 30/60s · round-robin"));
        wait.until(driver -> api().get().uri("/api/v1/queues").exchange().expectBody(String.class).returnResult()
                .getResponseBody().contains("\"limits\":{\"maxRunning\":2,\"maxRunningPerKey\":null,"
                        + "\"rate\":{\"count\":30,\"periodSeconds\":60},\"ratePerKey\":null,\"fairness\":\"round-robin\"}"));
        ((JavascriptExecutor) browser).executeScript("document.querySelector('#queues-table').parentElement.scrollLeft = 0;");
        screenshot("dashboard.png");

        // one click redrives the queue's failed tasks
        wait.until(driver -> {
            driver.findElement(row).findElement(By.cssSelector("button[data-retry-failed]")).click();
            return true;
        });
        wait.until(driver -> new Tasks(api()).get(failed).get("state").stringValue().equals("queued"));
        assertThat(((JavascriptExecutor) browser).executeScript("return window.sameDocument === true;"))
                .as("no reload along the way").isEqualTo(true);
    }

    @Test
    void whenTheConnectionDropsThePageSaysSoThenReconnectsAndShowsWhatItMissed() throws Exception {
        String queue = TaskFixtures.uniqueQueue("dashboard-drop");
        Tasks tasks = new Tasks(api());
        WebDriverWait wait = new WebDriverWait(browser, Duration.ofSeconds(30));
        try (TcpProxy proxy = new TcpProxy("127.0.0.1", port)) {
            signIn("http://127.0.0.1:" + proxy.port() + "/#/events", wait);
            long before = tasks.enqueue(queue, "{\"type\": \"noop\"}").get("id").longValue();
            wait.until(driver -> feedMentions(driver, before));

            proxy.cut();
            wait.until(ExpectedConditions.visibilityOfElementLocated(By.id("disconnected")));
            wait.until(ExpectedConditions.textToBe(By.id("connection"), "disconnected"));
            long during = tasks.enqueue(queue, "{\"type\": \"noop\"}").get("id").longValue();
            proxy.restore();

            wait.until(ExpectedConditions.textToBe(By.id("connection"), "live"));
            wait.until(ExpectedConditions.invisibilityOfElementLocated(By.id("disconnected")));
            wait.until(driver -> feedMentions(driver, during));
        }
    }

    @Test
    void theSchedulesPageShowsNextRunsAndPausesAndTriggersASchedule() throws Exception {
        String name = TaskFixtures.uniqueQueue("nightly-report");
        String queue = TaskFixtures.uniqueQueue("reports");
        api().put().uri("/api/v1/schedules/{n}", name).contentType(MediaType.APPLICATION_JSON)
                .bodyValue("{\"cron\": \"30 2 * * *\", \"timezone\": \"Europe/Berlin\", \"queue\": \"" + queue + "\","
                        + " \"task\": {\"type\": \"report\", \"payload\": {\"day\": \"yesterday\"}}}")
                .exchange().expectStatus().isCreated().expectBody().returnResult();
        try {
            WebDriverWait wait = (WebDriverWait) new WebDriverWait(browser, Duration.ofSeconds(30))
                    .ignoring(StaleElementReferenceException.class);
            signIn("http://127.0.0.1:" + port + "/#/schedules", wait);
            By row = By.cssSelector("#schedules-table tr[data-schedule='" + name + "']");
            wait.until(ExpectedConditions.visibilityOfElementLocated(row));
            assertThat(browser.findElement(row).findElements(By.cssSelector("ol.runs li"))).hasSize(5);
            assertThat(browser.findElement(row).getText()).contains("30 2 * * *").contains("Europe/Berlin")
                    .contains("report on " + queue);

            browser.findElement(row).findElement(By.cssSelector("button[data-schedule-toggle]")).click();
            wait.until(driver -> driver.findElement(row).findElement(By.cssSelector("td:last-child .badge"))
                    .getText().equals("paused"));
            assertThat(api().get().uri("/api/v1/schedules/{n}", name).exchange().expectBody(String.class).returnResult()
                    .getResponseBody()).contains("\"paused\":true");
            screenshot("dashboard-schedules.png");

            browser.findElement(row).findElement(By.cssSelector("button[data-schedule-trigger]")).click();
            wait.until(ExpectedConditions.urlMatches("#/task/\\d+$"));
            wait.until(ExpectedConditions.textToBePresentInElementLocated(By.id("task-fields"), name));
            assertThat(browser.findElement(By.id("task-payload")).getText()).contains("yesterday");
        } finally {
            api().delete().uri("/api/v1/schedules/{n}", name).exchange();
        }
    }

    @Test
    void aTokenSeesOnlyWhatItsScopesAllow() {
        String queue = TaskFixtures.uniqueQueue("dashboard-scoped");
        new Tasks(api()).enqueue(queue, "{\"type\": \"noop\"}");
        WebDriverWait wait = (WebDriverWait) new WebDriverWait(browser, Duration.ofSeconds(30))
                .ignoring(StaleElementReferenceException.class);

        signIn("http://127.0.0.1:" + port + "/#/queues", wait, "read-token");
        By row = By.cssSelector("#queues-table tr[data-queue='" + queue + "']");
        wait.until(ExpectedConditions.visibilityOfElementLocated(row));
        assertThat(browser.findElement(row).findElements(By.cssSelector("button")))
                .as("no pause, edit or retry for a read-only token").allSatisfy(b -> assertThat(b.isDisplayed()).isFalse());
        assertThat(browser.findElement(By.cssSelector("nav a[data-view='enqueue']")).isDisplayed()).isFalse();
        assertThat(browser.findElement(By.id("scope-notice")).isDisplayed()).isFalse();

        signIn("http://127.0.0.1:" + port + "/#/queues", wait, "enqueue-token");
        wait.until(ExpectedConditions.visibilityOfElementLocated(By.id("scope-notice")));
        assertThat(browser.findElement(By.id("scope-notice")).getText()).contains("(enqueue)").contains("read");
        assertThat(browser.findElement(By.cssSelector("nav a[data-view='enqueue']")).isDisplayed()).isTrue();
    }

    /** Opens the dashboard at {@code url} and gives it the token, as a user does the first time. */
    private static void signIn(String url, WebDriverWait wait) {
        signIn(url, wait, TOKEN);
    }

    private static void signIn(String url, WebDriverWait wait, String token) {
        browser.get(url);
        // a first visit: no token kept from an earlier test on the same origin
        ((JavascriptExecutor) browser).executeScript("sessionStorage.clear();");
        browser.navigate().refresh();
        wait.until(ExpectedConditions.visibilityOfElementLocated(By.id("token-input"))).sendKeys(token);
        browser.findElement(By.id("token-submit")).click();
        wait.until(ExpectedConditions.invisibilityOfElementLocated(By.id("token-dialog")));
        if (!token.equals("enqueue-token")) {
            wait.until(ExpectedConditions.textToBe(By.id("connection"), "live"));
        }
    }

    private static boolean feedMentions(WebDriver driver, long taskId) {
        return driver.findElements(By.cssSelector("#feed li")).stream()
                .anyMatch(line -> line.getText().contains("task " + taskId + " "));
    }

    private static List<WebElement> progressEvents(WebDriver driver) {
        return driver.findElements(By.cssSelector("#task-events .badge")).stream()
                .filter(badge -> badge.getText().equals("progress")).toList();
    }

    private static void replace(WebElement field, String text) {
        field.clear();
        field.sendKeys(text);
    }

    private static void screenshot(String name) throws Exception {
        File shot = ((TakesScreenshot) browser).getScreenshotAs(OutputType.FILE);
        Files.createDirectories(Path.of("target"));
        Files.copy(shot.toPath(), Path.of("target", name), StandardCopyOption.REPLACE_EXISTING);
    }
}
