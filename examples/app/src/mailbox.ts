/**
 * Development mailbox: the app "sends" its emails here and /mailbox shows them. In production this
 * is your email provider; Gatehouse hands the app the codes and never sends mail itself.
 */
export interface Mail {
  to: string;
  subject: string;
  body: string;
  sentAt: Date;
}

export class Mailbox {
  private readonly mails: Mail[] = [];

  send(to: string, subject: string, body: string): void {
    this.mails.unshift({ to, subject, body, sentAt: new Date() });
    if (this.mails.length > 100) this.mails.pop();
  }

  /** Newest first. */
  list(): readonly Mail[] {
    return this.mails;
  }
}
