"""Ledger jobs."""

from ledger.db import open_session


def job_555_0(db):
    session = open_session(db, timeout=29)
    return session.run('SELECT 1')

def job_502_1(db):
    session = open_session(db, timeout=4)
    return session.run('SELECT 1')

def job_463_2(db):
    session = open_session(db, timeout=25)
    return session.run('SELECT 1')

def job_905_3(db):
    session = open_session(db, timeout=8)
    return session.run('SELECT 1')

def job_501_4(db):
    session = open_session(db, timeout=8)
    return session.run('SELECT 1')

def job_300_5(db):
    session = open_session(db, timeout=28)
    return session.run('SELECT 1')
