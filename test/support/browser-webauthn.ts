import { chromium, type Browser, type CDPSession, type Page } from 'playwright-core';
import { ensureDebianPackages, type Availability } from './debian-packages';

/**
 * Debian's Chromium, driven by playwright-core, with the DevTools virtual WebAuthn authenticator
 * attached to a page: the browser side of passkey tests, with no hardware and no prompts.
 * Playwright never downloads a browser here.
 */
export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

// Playwright refuses --user-data-dir in launch(); it gives every launch a new empty profile in the
// temporary directory and removes it on close, which is what we want.
const CHROMIUM_FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

export function ensureChromium(): Promise<Availability> {
  return ensureDebianPackages([{ name: 'chromium', provides: CHROMIUM_PATH }]);
}

/** The fields of CDP's WebAuthn.VirtualAuthenticatorOptions a test may change. */
export interface VirtualAuthenticatorSettings {
  isUserVerified?: boolean;
  hasResidentKey?: boolean;
  hasUserVerification?: boolean;
  defaultBackupEligibility?: boolean;
  defaultBackupState?: boolean;
}

/** A credential as the virtual authenticator holds it, ids in base64url like the WebAuthn JSON. */
export interface VirtualCredential {
  credentialId: string;
  isResidentCredential: boolean;
  rpId?: string;
  userHandle?: string;
  signCount: number;
}

// CDP sends binary fields as standard base64.
const toBase64URL = (base64: string) => Buffer.from(base64, 'base64').toString('base64url');

export class WebAuthnPage {
  constructor(readonly page: Page, readonly cdp: CDPSession, readonly authenticatorId: string) {}

  async credentials(): Promise<VirtualCredential[]> {
    const { credentials } = await this.cdp.send('WebAuthn.getCredentials', { authenticatorId: this.authenticatorId });
    return credentials.map((credential) => ({
      credentialId: toBase64URL(credential.credentialId),
      isResidentCredential: credential.isResidentCredential,
      rpId: credential.rpId,
      userHandle: credential.userHandle === undefined ? undefined : toBase64URL(credential.userHandle),
      signCount: credential.signCount,
    }));
  }

  /** Calls a function the page defines globally and returns what its promise resolves to. */
  call<T = any>(name: string, ...args: unknown[]): Promise<T> {
    return this.page.evaluate(([fn, list]) => (globalThis as any)[fn](...list), [name, args] as const);
  }

  /** Like call, for a ceremony expected to fail: the DOMException's name and message, or 'ok'. */
  failure(name: string, ...args: unknown[]): Promise<string> {
    return this.page.evaluate(([fn, list]) => (globalThis as any)[fn](...list).then(
      () => 'ok',
      (error: Error) => `${error.name}: ${error.message}`,
    ), [name, args] as const);
  }

  /** What the next ceremony's "biometric check" answers. */
  async setUserVerified(isUserVerified: boolean): Promise<void> {
    await this.cdp.send('WebAuthn.setUserVerified', { authenticatorId: this.authenticatorId, isUserVerified });
  }

  async removeCredential(credentialId: string): Promise<void> {
    const base64 = Buffer.from(credentialId, 'base64url').toString('base64');
    await this.cdp.send('WebAuthn.removeCredential', { authenticatorId: this.authenticatorId, credentialId: base64 });
  }

  async close(): Promise<void> {
    await this.page.context().close();
  }
}

export class WebAuthnBrowser {
  private constructor(readonly browser: Browser) {}

  static async launch(): Promise<WebAuthnBrowser> {
    return new WebAuthnBrowser(await chromium.launch({ executablePath: CHROMIUM_PATH, args: CHROMIUM_FLAGS }));
  }

  /**
   * A page in its own context with a platform passkey authenticator (CTAP2, internal transport,
   * resident keys, user verification that succeeds) attached before `url` loads. Use an
   * `http://localhost:<port>` URL: localhost is a secure context, so WebAuthn is available.
   */
  async open(url: string, settings: VirtualAuthenticatorSettings = {}): Promise<WebAuthnPage> {
    const context = await this.browser.newContext();
    const page = await context.newPage();
    const cdp = await context.newCDPSession(page);
    await cdp.send('WebAuthn.enable', { enableUI: false });
    const { authenticatorId } = await cdp.send('WebAuthn.addVirtualAuthenticator', {
      options: {
        protocol: 'ctap2',
        ctap2Version: 'ctap2_1',
        transport: 'internal',
        hasResidentKey: true,
        hasUserVerification: true,
        isUserVerified: true,
        automaticPresenceSimulation: true,
        ...settings,
      },
    });
    await page.goto(url);
    return new WebAuthnPage(page, cdp, authenticatorId);
  }

  async close(): Promise<void> {
    await this.browser.close();
  }
}
