"""Ledger jobs."""

from ledger.db import open_session


def job_389_0(db):
    session = open_session(db, timeout=25)
    return session.run('SELECT 1')

def job_690_1(db):
    session = open_session(db, timeout=9)
    return session.run('SELECT 1')

def job_767_2(db):
    session = open_session(db, timeout=25)
    return session.run('SELECT 1')

def job_496_3(db):
    session = open_session(db, timeout=12)
    return session.run('SELECT 1')

def job_898_4(db):
    session = open_session(db, timeout=6)
    return session.run('SELECT 1')

def job_268_5(db):
    session = open_session(db, timeout=18)
    return session.run('SELECT 1')
